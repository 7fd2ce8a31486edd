// The edge engine's own `grep` for its most common recursive search, `grep -r[n][l] WORD PATH...`
// with a plain word: the same answer as the interpreter's grep gives (the same walk, names, lines
// and exit code), found in one pass over the edge's filesystem with the files fetched together,
// rather than file by file through the interpreter's checks (about 50 us a file); a walk the
// state's commands search again is searched as one text (edge-grep-text.ts), and a script that is
// this grep alone is answered without the interpreter (loneGrep). Any other use
// of grep (another flag, a pattern with a character regular expressions read, a glob, a link on
// the way, a limit within reach) goes to the interpreter's grep unchanged (origCommand).
import type { Command, CommandContext, ExecResult } from 'just-bash';
import type { EdgeFs } from './edge-fs.ts';
import { searchText, textOf, type WalkText } from './edge-grep-text.ts';
import { matchingLines, wordSearch } from './edge-grep-word.ts';
import type { DirNode, FileNode, FsNode } from './edge-fs-nodes.ts';

/** What the fast path answers: the flags it knows (r and R recurse, n numbers lines, l names files, F fixed). */
interface Plan {
  word: string;
  operands: string[];
  lineNumbers: boolean;
  filesOnly: boolean;
}

/** A word that means itself in basic, extended and fixed grep alike. */
const PLAIN_WORD = /^[^\\.[\]*^$+?(){}|\n]+$/;
const FLAGS = /^-[rRnlF]+$/;
const GLOB = /[*?[]/;
/** How deep the interpreter's grep walks (its own limit): the fast path stays well within it. */
const MAX_DEPTH = 200;
/** Files read at once, as the interpreter's grep reads them. */
const BATCH = 50;

export function planOf(args: readonly string[]): Plan | undefined {
  let recursive = false;
  let lineNumbers = false;
  let filesOnly = false;
  const words: string[] = [];
  for (const arg of args) {
    if (arg.startsWith('-') && arg !== '-') {
      if (!FLAGS.test(arg)) return undefined;
      recursive ||= /[rR]/.test(arg);
      lineNumbers ||= arg.includes('n');
      filesOnly ||= arg.includes('l');
    } else words.push(arg);
  }
  const [word, ...operands] = words;
  if (!recursive || word === undefined || !PLAIN_WORD.test(word) || operands.length === 0) return undefined;
  if (operands.some((operand) => operand === '-' || operand === '' || GLOB.test(operand))) return undefined;
  return { word, operands, lineNumbers, filesOnly };
}

/** Why the fast path gives a command back to the interpreter's grep. */
class GiveBack extends Error {}

/**
 * `grep` for a command's filesystem: the fast path where `planOf` takes the command, the
 * interpreter's grep otherwise. Trusted, as the filesystem's own code is: it runs no script.
 */
export function edgeGrep(fs: EdgeFs, onFast?: () => void): Command {
  return {
    name: 'grep',
    trusted: true,
    async execute(args, ctx) {
      const plan = planOf(args);
      const original = () => ctx.origCommand!(args);
      if (plan === undefined || ctx.origCommand === undefined || ctx.limits === undefined) return original();
      try {
        const answer = await fastGrep(fs, plan, { cwd: ctx.cwd, signal: ctx.signal, limits: ctx.limits });
        onFast?.();
        return answer;
      } catch (error) {
        if (error instanceof GiveBack) return original();
        throw error;
      }
    },
  };
}

/**
 * A script that is one `grep` and nothing else (edge-script.ts loneCommand), answered by the fast
 * path without the interpreter (its parse, its commands and its output plumbing, about half the
 * work of a grep -rn over 2,000 files); undefined where the fast path does not take it, or
 * gives it back, or its output is longer than an answer keeps, and the interpreter runs the script.
 * `limits` are the interpreter's own for the command (the same the fast path meets inside it).
 */
export async function loneGrep(
  fs: EdgeFs,
  args: readonly string[],
  context: GrepContext,
  maxOutputChars: number,
): Promise<ExecResult | undefined> {
  const plan = planOf(args);
  if (plan === undefined) return undefined;
  try {
    const answer = await fastGrep(fs, plan, context);
    return answer.stdout.length > maxOutputChars ? undefined : answer;
  } catch (error) {
    if (error instanceof GiveBack) return undefined;
    throw error;
  }
}

/** What the fast path reads of a command's context. */
type GrepContext = Pick<CommandContext, 'cwd' | 'signal'> & {
  limits: Pick<NonNullable<CommandContext['limits']>, 'maxGlobOperations' | 'maxArrayElements' | 'maxLoopIterations'>;
};

async function fastGrep(fs: EdgeFs, plan: Plan, ctx: GrepContext): Promise<ExecResult> {
  const limits = ctx.limits;
  const budget = { operations: 0, max: limits.maxGlobOperations };
  const files: Found = { nodes: [], prefixes: [], names: [], walks: [] };
  for (const operand of plan.operands) await walk(fs, fs.resolvePath(ctx.cwd, operand), operand, 0, files, budget);
  const { nodes, prefixes, names, walks } = files;
  if (nodes.length >= limits.maxArrayElements) throw new GiveBack();
  // Every file's content asked for at once: a few round trips (on the Node home, to the server
  // thread) rather than one or two per directory.
  fs.prefetch(nodes);
  // Each file's content held (and counted against the command's bound) before any is searched.
  const contents: Uint8Array[] = [];
  for (let start = 0; start < nodes.length; start += BATCH) {
    if (ctx.signal?.aborted) throw new GiveBack();
    try {
      const batch = await fs.heldContents(nodes.slice(start, start + BATCH));
      for (let index = 0; index < batch.length; index += 1) contents.push(batch[index]!);
    } catch {
      throw new GiveBack();
    }
  }
  const search = wordSearch(plan.word);
  const maxWork = Math.max(limits.maxLoopIterations, Math.min(limits.maxArrayElements, limits.maxLoopIterations * 10));
  let stdout = '';
  let matched = false;
  const found = (index: number, lines: readonly (readonly [number, string])[]) => {
    matched = true;
    const name = prefixes[index]! + names[index]!;
    if (plan.filesOnly) stdout += `${name}\n`;
    else
      for (const [number, line] of lines)
        stdout += plan.lineNumbers ? `${name}:${number}:${line}\n` : `${name}:${line}\n`;
  };
  let nextWalk = 0;
  for (let index = 0; index < nodes.length;) {
    // A walk whose files were searched one by one (its text not made) is passed.
    while (walks[nextWalk] !== undefined && walks[nextWalk]!.from < index) nextWalk += 1;
    const shared = walks[nextWalk]?.from === index ? walks[nextWalk++]!.walked : undefined;
    const text = shared && textOf(shared, contents, index, fs, maxWork, limits.maxArrayElements);
    if (text !== undefined) {
      searchText(text, search.word, plan.filesOnly, (file, lines) => found(index + file, lines));
      index += shared!.nodes.length;
      continue;
    }
    const lines = matchingLines(contents[index]!, search, maxWork, limits.maxArrayElements);
    if (lines === undefined) throw new GiveBack();
    if (lines.length > 0) found(index, lines);
    index += 1;
  }
  return { stdout, stderr: '', exitCode: matched ? 0 : 1 };
}

/**
 * The files the walk found, in order: each one's node and its name as grep prints it, in two parts
 * (its directory's, shared by its siblings, and its own), joined only for a file that matches: a
 * walk finds thousands, and their garbage is collected by the thousand.
 */
interface Found {
  nodes: FileNode[];
  prefixes: string[];
  names: string[];
  /** Where a shared directory's walk lies among them (its files in a row from `from`), in order. */
  walks: { from: number; walked: Walked }[];
}

/**
 * The files below `name` (at `at`, absolute) as the interpreter's grep -r lists them: names in
 * order, those starting with a dot left out, directories walked depth first. A link, or anything
 * the walk cannot read as it does, gives the command back.
 */
async function walk(
  fs: EdgeFs,
  at: string,
  name: string,
  depth: number,
  files: Found,
  budget: { operations: number; max: number },
): Promise<void> {
  const spend = () => {
    if (++budget.operations > budget.max) throw new GiveBack();
  };
  if (depth >= MAX_DEPTH) throw new GiveBack();
  let node: FsNode | undefined;
  try {
    node = fs.nodeAt(at);
    // A link above it (the operand's own directories) is followed by the interpreter: not here.
    if (node === undefined || (await fs.realpath(at)) !== at) throw new GiveBack();
  } catch {
    throw new GiveBack();
  }
  if (depth === 0) spend();
  if (node.type === 'dir' && fs.shares(node)) walkShared(node, name, depth, files, budget, fs);
  else walkNode(node, name, depth, files, spend, fs);
}

/**
 * A shared directory's walk (its state's tree: nothing below it ever changes), made once: its
 * files in walk order, their names below it, the operations the walk spends and how deep it goes.
 */
interface Walked {
  nodes: FileNode[];
  names: string[];
  operations: number;
  depth: number;
  /** Commands that searched it so far, until its text is made. */
  searches: number;
  /** Its text, once made (textOf); null where the tree's budget had no room for it. */
  text?: WalkText | null;
}

const walks = new WeakMap<DirNode, Walked>();

/** The walk below a shared directory, as walkNode walks it, from its walk made once (the same files, names, spend and depth). */
function walkShared(
  node: DirNode,
  name: string,
  depth: number,
  files: Found,
  budget: { operations: number; max: number },
  fs: EdgeFs,
): void {
  let walked = walks.get(node);
  if (walked === undefined) {
    const found: Found = { nodes: [], prefixes: [], names: [], walks: [] };
    const made = { operations: 0, depth: 0 };
    const spend = () => {
      if (++made.operations > budget.max) throw new GiveBack();
    };
    walkNode(node, '.', 0, found, spend, fs, made);
    walked = {
      nodes: found.nodes,
      names: found.names.map((below, index) => found.prefixes[index]! + below),
      operations: made.operations,
      depth: made.depth,
      searches: 0,
    };
    walks.set(node, walked);
  }
  budget.operations += walked.operations;
  if (budget.operations > budget.max || depth + walked.depth >= MAX_DEPTH) throw new GiveBack();
  const prefix = name === '.' ? '' : `${name}/`;
  files.walks.push({ from: files.nodes.length, walked });
  for (let index = 0; index < walked.nodes.length; index += 1) {
    files.nodes.push(walked.nodes[index]!);
    files.prefixes.push(prefix);
    files.names.push(walked.names[index]!);
  }
}

/** The walk below a node reached without a link: synchronous, since the tree is in memory. */
function walkNode(
  node: FsNode,
  name: string,
  depth: number,
  files: Found,
  spend: () => void,
  fs: EdgeFs,
  reached?: { depth: number },
): void {
  if (depth >= MAX_DEPTH) throw new GiveBack();
  if (reached !== undefined && depth > reached.depth) reached.depth = depth;
  if (node.type === 'symlink') throw new GiveBack();
  if (node.type === 'file') {
    files.nodes.push(node);
    files.prefixes.push('');
    files.names.push(name);
    return;
  }
  spend();
  const prefix = name === '.' ? '' : `${name}/`;
  const children = fs.childrenOf(node);
  for (let index = 0; index < children.length; index += 1) {
    const child = children[index]!;
    const childName = child[0];
    const childNode = child[1];
    spend();
    if (childName.charCodeAt(0) === 46 /* . */) continue;
    if (childNode.type === 'symlink') throw new GiveBack();
    if (childNode.type === 'file') {
      files.nodes.push(childNode);
      files.prefixes.push(prefix);
      files.names.push(childName);
    } else walkNode(childNode, prefix + childName, depth + 1, files, spend, fs, reached);
  }
}
