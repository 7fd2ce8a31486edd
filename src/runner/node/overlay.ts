// Runs an exec over an overlay of the workspace copy, so what the command changed is its upper layer, not a walk.
//
// The command sees an overlayfs whose lower layer is the workspace copy and whose upper layer is
// a fresh directory of the job; the mount lives in a private mount namespace that ends with the
// command. Afterwards the upper layer holds exactly what the command created, replaced or
// deleted (`overlay-upper.ts` reads it and applies it to the copy).
import { spawnSync } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  constants,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { bubblewrapArgs, locateBubblewrap } from './bubblewrap.ts';
import type { OverlayLayers, OverlaySupport } from './overlay-layers.ts';
import { attributeArguments, readOverlayAttributes } from './overlay-upper.ts';

export type { OverlayLayers, OverlaySupport };

export type OverlayProbe = { support: OverlaySupport; reason?: undefined } | { support: undefined; reason: string };

/** What an exec over an overlay needs: how to mount, and its layers. */
export interface OverlayMount {
  support: OverlaySupport;
  layers: OverlayLayers;
}

// Data stays in the upper layer only until it is applied to the copy: the merge uses no index or
// metadata-only copies (an upper file always holds its data), and `volatile` skips syncing a
// layer that is thrown away after the job anyway.
const KINDS = {
  root: {
    unshare: ['--mount', '--propagation', 'private'],
    options: ['redirect_dir=on', 'metacopy=off', 'index=off', 'xino=off', 'volatile'],
    attributePrefix: 'trusted.overlay.',
    renamesDirectories: true,
  },
  // The kernel refuses redirects with userxattr (nofollow is all it takes), so directory renames copy there.
  'user-namespace': {
    unshare: ['--user', '--map-root-user', '--mount', '--propagation', 'private'],
    options: ['userxattr', 'redirect_dir=nofollow', 'metacopy=off', 'index=off', 'xino=off', 'volatile'],
    attributePrefix: 'user.overlay.',
    renamesDirectories: false,
  },
} as const;

/** Exit status of the launcher when the overlay cannot be mounted: the command never ran. */
const OVERLAY_MOUNT_FAILED = 125;
const LAUNCHER = `"$1" -t overlay overlay -o "$2" "$3" || { echo 'toolgate: could not mount the workspace overlay on this runner' >&2; exit ${OVERLAY_MOUNT_FAILED}; }; shift 3; exec "$@"`;
/** Characters overlayfs or mount(8) read as separators in a layer path. */
const UNSAFE_PATH = /[,:\\"\n]/;

const probes = new Map<string, OverlayProbe>();

/**
 * Whether exec jobs can run over an overlay here, found once per scratch directory by a real
 * mount: a command in bubblewrap over a probe workspace replaces a directory, renames one and
 * deletes a file, and the upper layer must show all three as the apply step reads them.
 */
export function detectOverlay(scratchParent: string = tmpdir()): OverlayProbe {
  const parent = resolve(scratchParent);
  let probe = probes.get(parent);
  if (!probe) {
    probe = probeOverlay(parent);
    probes.set(parent, probe);
  }
  return probe;
}

/** The program and arguments that mount the layers in a new mount namespace, then exec `program args` there. */
export function overlayLaunch(
  support: OverlaySupport,
  layers: OverlayLayers,
  program: string,
  args: readonly string[],
): { command: string; args: string[] } {
  const options = [
    `lowerdir=${layers.lower}`,
    `upperdir=${layers.upper}`,
    `workdir=${layers.work}`,
    ...KINDS[support.kind].options,
  ].join(',');
  return {
    command: support.unshare,
    args: [
      ...KINDS[support.kind].unshare,
      '--',
      support.shell,
      '-c',
      LAUNCHER,
      'toolgate-overlay',
      support.mount,
      options,
      layers.merged,
      program,
      ...args,
    ],
  };
}

/** Makes a job's layer directories under `parent`; undefined when a path would not survive mount's option parsing. */
export async function createLayers(parent: string, lowerDir: string): Promise<OverlayLayers | undefined> {
  // Absolute: mount resolves a relative layer path from wherever it runs.
  const lower = resolve(lowerDir);
  const base = resolve(parent);
  if (UNSAFE_PATH.test(lower) || UNSAFE_PATH.test(base)) return undefined;
  await mkdir(base, { recursive: true });
  const layers = layersIn(await mkdtemp(join(base, 'job-')), lower);
  await Promise.all([mkdir(layers.upper), mkdir(layers.work), mkdir(layers.merged)]);
  return layers;
}

/** Removes every job's layer directories under `parent`: those a runner that stopped without cleaning up left behind. */
export async function clearLayers(parent: string): Promise<void> {
  const names = await readdir(parent).catch(() => [] as string[]);
  await Promise.all(names.map((name) => removeLayers(layersIn(join(parent, name), ''))));
}

/** Removes a job's layer directories (the mount went with the job's namespace). */
export async function removeLayers(layers: OverlayLayers): Promise<void> {
  // The kernel leaves directories under work/ without permissions; only root can list them as they are.
  await rm(layers.dir, { recursive: true, force: true }).catch(async () => {
    await unlock(layers.work);
    await rm(layers.dir, { recursive: true, force: true });
  });
}

async function unlock(dir: string): Promise<void> {
  await chmod(dir, 0o700).catch(() => undefined);
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  await Promise.all(entries.filter((entry) => entry.isDirectory()).map((entry) => unlock(join(dir, entry.name))));
}

/** One sentence for the start-up log saying how an exec's changes are found. */
export function describeChangeTracking(probe: OverlayProbe): string {
  if (!probe.support) return `exec changes are found by a full scan of the workspace copy (${probe.reason})`;
  const how = probe.support.kind === 'root' ? 'in a private mount namespace' : 'in a user namespace';
  return `exec changes are tracked by an overlay mounted ${how}, not a scan`;
}

function probeOverlay(scratchParent: string): OverlayProbe {
  const bwrap = locateBubblewrap();
  const unshare = findTool('unshare');
  const mount = findTool('mount');
  const getfattr = findTool('getfattr');
  const shell = findTool('sh');
  if (!bwrap) return { support: undefined, reason: 'bubblewrap is not installed' };
  if (!unshare || !mount || !shell) return { support: undefined, reason: 'unshare, mount or sh is missing' };
  if (!getfattr) return { support: undefined, reason: 'getfattr is missing; install the attr package' };
  const kinds = process.getuid?.() === 0 ? (['root', 'user-namespace'] as const) : (['user-namespace'] as const);
  const reasons: string[] = [];
  for (const kind of kinds) {
    const support: OverlaySupport = {
      kind,
      unshare,
      mount,
      shell,
      getfattr,
      attributePrefix: KINDS[kind].attributePrefix,
      renamesDirectories: KINDS[kind].renamesDirectories,
    };
    const failure = probeKind(support, bwrap, scratchParent);
    if (failure === undefined) return { support };
    reasons.push(`${kind}: ${failure}`);
  }
  return { support: undefined, reason: `no overlay could be mounted (${reasons.join('; ')})` };
}

function probeKind(support: OverlaySupport, bwrap: string, scratchParent: string): string | undefined {
  let dir: string | undefined;
  try {
    if (UNSAFE_PATH.test(scratchParent))
      return `the directory ${scratchParent} holds a character mount options cannot carry`;
    mkdirSync(scratchParent, { recursive: true });
    dir = mkdtempSync(join(scratchParent, 'probe-'));
    const lower = join(dir, 'lower');
    for (const name of ['replaced', 'moved', 'kept']) mkdirSync(join(lower, name), { recursive: true });
    for (const name of ['replaced/a', 'moved/b', 'kept/c']) writeFileSync(join(lower, name), name);
    const layers = layersIn(dir, lower);
    for (const path of [layers.upper, layers.work, layers.merged]) mkdirSync(path);
    const command = 'rm -r replaced && mkdir replaced && mv moved renamed && rm kept/c && ln -s nowhere kept/dangling';
    const launch = overlayLaunch(
      support,
      layers,
      bwrap,
      bubblewrapArgs({
        workspaceDir: layers.merged,
        cwd: '/workspace',
        env: { PATH: '/usr/bin:/bin' },
        network: false,
        command,
      }),
    );
    const ran = spawnSync(launch.command, launch.args, { env: {}, timeout: 10_000, encoding: 'utf8' });
    if (ran.status !== 0)
      return `the probe command failed (${ran.error?.message ?? (ran.stderr.trim().replaceAll('\n', ' ') || `status ${ran.status}`)})`;
    const whiteout = lstatSync(join(layers.upper, 'kept/c'));
    if (!whiteout.isCharacterDevice() || whiteout.rdev !== 0) return 'a deleted file left no whiteout';
    const listed = spawnSync(support.getfattr, attributeArguments(support), { cwd: layers.upper, timeout: 10_000 });
    if (listed.status !== 0) return `getfattr failed (${listed.stderr.toString().trim()})`;
    const attributes = readOverlayAttributes(listed.stdout, support);
    if (!attributes.get('replaced')?.opaque) return 'a replaced directory is not marked opaque';
    if (support.renamesDirectories && attributes.get('renamed')?.redirect !== 'moved')
      return 'a renamed directory has no redirect';
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    if (dir) {
      unlockSync(join(dir, 'work'));
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

function unlockSync(dir: string): void {
  try {
    chmodSync(dir, 0o700);
    for (const entry of readdirSync(dir, { withFileTypes: true }))
      if (entry.isDirectory()) unlockSync(join(dir, entry.name));
  } catch {
    // Gone, or never made because the mount failed.
  }
}

function layersIn(dir: string, lower: string): OverlayLayers {
  return {
    lower,
    upper: join(dir, 'upper'),
    work: join(dir, 'work'),
    merged: join(dir, 'merged'),
    stash: join(dir, 'stash'),
    dir,
  };
}

function findTool(name: string): string | undefined {
  return ['/usr/bin', '/bin', '/usr/sbin', '/sbin']
    .map((dir) => join(dir, name))
    .find((path) => {
      try {
        accessSync(path, constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}
