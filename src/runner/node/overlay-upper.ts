// An exec's upper overlay layer: read as a tree of what the command changed, then applied to the workspace copy.
//
// In the upper layer a regular file, symlink or directory is created or replaced; a character
// device 0/0 is a whiteout (the lower entry was deleted); a directory marked opaque hides all the
// lower layer has at its path (`rm -r d; mkdir d`); a directory with a redirect shows another
// lower directory (a rename). Opacity and redirects live in extended attributes, which Node cannot
// read, so one getfattr lists them for the whole layer.
import { execFile } from 'node:child_process';
import { lchownSync, lstatSync, mkdirSync, renameSync } from 'node:fs';
import { lstat, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ConfinedTree } from './confined-tree.ts';
import type { OverlayLayers, OverlaySupport } from './overlay-layers.ts';

export interface UpperNode {
  name: string;
  /** 'whiteout': the command deleted what the lower layer has here; 'other': a fifo, socket or device. */
  kind: 'dir' | 'file' | 'symlink' | 'whiteout' | 'other';
  /** A directory's permission bits, carried over to the copy. */
  mode: number;
  /** A directory that hides all the lower layer has at its path. */
  opaque: boolean;
  /** For a renamed directory: the lower directory it shows, workspace-relative. */
  source?: string;
  children: UpperNode[];
  /** A whiteout or a renamed directory lies below, so the directory cannot be moved into the copy in one piece. */
  tangled: boolean;
}

interface Attributes {
  opaque: boolean;
  redirect?: string;
}

const ATTRIBUTE_OUTPUT_BYTES = 64 * 1024 * 1024;

/** The upper layer as a tree (its root is the workspace root). Names that are not UTF-8 cannot be workspace paths and are left out. */
export async function readUpper(support: OverlaySupport, upper: string): Promise<UpperNode> {
  let directories = 0;
  const list = async (host: string, name: string, mode: number): Promise<UpperNode> => {
    const entries = await readdir(host, { withFileTypes: true, encoding: 'buffer' });
    const children = await Promise.all(
      entries.map(async (entry): Promise<UpperNode | undefined> => {
        const childName = entry.name.toString('utf8');
        if (!Buffer.from(childName).equals(entry.name)) return undefined;
        const path = join(host, childName);
        if (entry.isDirectory()) {
          directories += 1;
          return list(path, childName, (await lstat(path)).mode & 0o7777);
        }
        let kind: UpperNode['kind'] = entry.isFile() ? 'file' : entry.isSymbolicLink() ? 'symlink' : 'other';
        if (entry.isCharacterDevice() && (await lstat(path)).rdev === 0) kind = 'whiteout';
        return { name: childName, kind, mode: 0, opaque: false, children: [], tangled: false };
      }),
    );
    return {
      name,
      kind: 'dir',
      mode,
      opaque: false,
      children: children.filter((child) => child !== undefined),
      tangled: false,
    };
  };
  const root = await list(upper, '', (await lstat(upper)).mode & 0o7777);
  const attributes = directories > 0 ? await readAttributes(support, upper) : new Map<string, Attributes>();
  settle(root, '', '', attributes);
  return root;
}

/**
 * Makes the lower directory (the workspace copy, held as `lower`) what the command saw: renamed
 * lower directories move aside first, then the upper layer's entries are renamed in, whiteouts
 * delete, opaque directories replace. What stays in the upper layer is thrown away with it. The
 * upper layer no longer changes (its command has ended); the copy may (a started process bound
 * to it still runs), so every path in it goes through the confined tree.
 */
export async function applyUpper(root: UpperNode, layers: OverlayLayers, lower: ConfinedTree): Promise<void> {
  const renamed: { node: UpperNode; source: string }[] = [];
  const collect = (node: UpperNode) => {
    for (const child of node.children) {
      if (child.source !== undefined) renamed.push({ node: child, source: child.source });
      collect(child);
    }
  };
  collect(root);
  // Deepest first: a renamed directory inside another renamed one leaves before its parent does.
  renamed.sort((a, b) => b.source.split('/').length - a.source.split('/').length);
  const stashed = new Map<UpperNode, string>();
  if (renamed.length > 0) await mkdir(layers.stash, { recursive: true });
  for (const [index, { node, source }] of renamed.entries()) {
    const aside = join(layers.stash, String(index));
    renameSync(lower.at(source), aside);
    lower.forget(source);
    stashed.set(node, aside);
  }
  const apply = async (node: UpperNode, relative: string): Promise<void> => {
    for (const child of node.children) {
      const path = relative === '' ? child.name : `${relative}/${child.name}`;
      const from = join(layers.upper, path);
      if (child.kind === 'whiteout') {
        lower.remove(path);
        continue;
      }
      const onDisk = lower.lstat(path);
      if (child.kind !== 'dir') {
        if (onDisk?.isDirectory()) lower.remove(path);
        renameSync(from, lower.at(path));
        continue;
      }
      const aside = stashed.get(child);
      // A directory both layers show stays where it is; any other replaces what the copy has there.
      const merged = aside === undefined && !child.opaque && onDisk?.isDirectory() === true;
      if (!merged && onDisk) lower.remove(path);
      if (aside !== undefined) {
        renameSync(aside, lower.at(path));
      } else if (!merged && !child.tangled) {
        renameSync(from, lower.at(path));
        continue;
      } else if (!merged) {
        mkdirSync(lower.at(path));
        // Made by the runner, it is still the command's directory: it keeps the owner the command gave it (its own user's, under a root runner).
        const { uid, gid } = lstatSync(from);
        lchownSync(lower.at(path), uid, gid);
      }
      await apply(child, path);
      if (!merged || (onDisk!.mode & 0o7777) !== child.mode) lower.chmodDir(path, child.mode);
    }
  };
  await apply(root, '');
}

/** getfattr's arguments, run from the upper directory: the opacity and redirect of every entry, links themselves never followed. */
export function attributeArguments(support: OverlaySupport): string[] {
  return [
    '-R',
    '-P',
    '-h',
    '-d',
    '-m',
    `^${support.attributePrefix.replaceAll('.', '\\.')}(opaque|redirect)$`,
    '-e',
    'hex',
    '.',
  ];
}

/**
 * Parses `getfattr -d -e hex` output run from the upper directory: relative path → opacity and
 * redirect. getfattr writes names with control characters and backslashes as `\ooo`, other bytes as they are.
 */
export function readOverlayAttributes(output: Buffer, support: OverlaySupport): Map<string, Attributes> {
  const found = new Map<string, Attributes>();
  let current: Attributes | undefined;
  for (const line of output.toString('latin1').split('\n')) {
    if (line.startsWith('# file: ')) {
      const raw = line
        .slice('# file: '.length)
        .replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
      const path = Buffer.from(raw, 'latin1')
        .toString('utf8')
        .replace(/^\.(\/|$)/, '');
      current = { opaque: false };
      found.set(path, current);
      continue;
    }
    const match = /^([^=]+)=0x([0-9a-f]*)$/.exec(line);
    if (!match || !current) continue;
    const value = Buffer.from(match[2]!, 'hex').toString('utf8');
    if (match[1] === `${support.attributePrefix}opaque`) current.opaque = value === 'y' || value === 'x';
    if (match[1] === `${support.attributePrefix}redirect`) current.redirect = value;
  }
  return found;
}

function readAttributes(support: OverlaySupport, upper: string): Promise<Map<string, Attributes>> {
  return new Promise((resolve, reject) => {
    execFile(
      support.getfattr,
      attributeArguments(support),
      { cwd: upper, env: {}, encoding: 'buffer', maxBuffer: ATTRIBUTE_OUTPUT_BYTES },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`getfattr failed: ${stderr.toString().trim() || error.message}`));
        else resolve(readOverlayAttributes(stdout, support));
      },
    );
  });
}

/**
 * Sets opacity and the lower source of each directory, and marks tangled ones. `lowerPath` is the
 * lower directory the node shows ('' for the root; undefined when it shows none).
 */
function settle(
  node: UpperNode,
  path: string,
  lowerPath: string | undefined,
  attributes: ReadonlyMap<string, Attributes>,
): void {
  for (const child of node.children) {
    const childPath = path === '' ? child.name : `${path}/${child.name}`;
    if (child.kind === 'whiteout') node.tangled = true;
    if (child.kind !== 'dir') continue;
    const found = attributes.get(childPath);
    child.opaque = found?.opaque ?? false;
    let childLower: string | undefined;
    if (child.opaque) {
      childLower = undefined;
    } else if (found?.redirect !== undefined) {
      const redirect = found.redirect;
      if (redirect.startsWith('/')) childLower = redirect.replace(/^\/+/, '');
      else if (lowerPath !== undefined) childLower = lowerPath === '' ? redirect : `${lowerPath}/${redirect}`;
      else
        throw new Error(
          `the renamed directory ${childPath} has a relative redirect under a directory with no lower layer`,
        );
      // Only the kernel can set the attribute, but a path that could leave the copy is refused all the same.
      if (childLower.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) {
        throw new Error(
          `the renamed directory ${childPath} shows ${JSON.stringify(childLower)}, which is not a path in the workspace`,
        );
      }
      child.source = childLower;
    } else {
      childLower = lowerPath === undefined ? undefined : lowerPath === '' ? child.name : `${lowerPath}/${child.name}`;
    }
    settle(child, childPath, childLower, attributes);
    if (child.tangled || child.source !== undefined) node.tangled = true;
  }
}
