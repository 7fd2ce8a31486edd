// Finds once whether and how this host gives commands cgroups, and prepares the parent their groups go under.
//
// cgroup v2 is used where this process's cgroup offers the memory and pids controllers, else
// the v1 memory and pids hierarchies where both are mounted. The parent is `toolgate` below this
// process's own cgroup (so the host's limits on the runner still bound its commands), and each
// command's group is named for the runner's pid, so a runner cleans up only what a dead one left.
import { mkdirSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { ProcessCgroup, readOr, write, type CgroupLayout } from './cgroups.ts';

export type CgroupProbe = { layout: CgroupLayout; reason?: undefined } | { layout: undefined; reason: string };

const PARENT = 'toolgate';
/** v2: where this process moves when its own cgroup must hand controllers to children (a cgroup with processes cannot). */
const SERVER_LEAF = 'toolgate-server';
const CONTROLLERS = ['memory', 'pids'];

let probed: CgroupProbe | undefined;

/** Whether and how commands get cgroups on this host, found once (with a real group made and removed). */
export function detectCgroups(): CgroupProbe {
  probed ??= probe();
  return probed;
}

interface Mount {
  root: string;
  point: string;
  type: string;
  superOptions: string[];
}

function probe(): CgroupProbe {
  let mounts: Mount[];
  let own: Map<string, string>;
  try {
    mounts = readMounts();
    own = readOwnCgroups();
  } catch (error) {
    return { layout: undefined, reason: `cgroups could not be read (${(error as Error).message})` };
  }
  const reasons: string[] = [];
  const v2 = mounts.find((mount) => mount.type === 'cgroup2');
  const v2Own = own.get('');
  if (v2 && v2Own !== undefined) {
    const dir = within(v2, v2Own);
    const offered = dir === undefined ? [] : readOr(join(dir, 'cgroup.controllers'), '').trim().split(/\s+/);
    if (dir !== undefined && CONTROLLERS.every((name) => offered.includes(name))) {
      const result = tryLayout(() => prepareV2(dir));
      if (result.layout) return result;
      reasons.push(`cgroup v2: ${result.reason}`);
    } else {
      reasons.push('cgroup v2 offers no memory and pids controllers here');
    }
  }
  const v1 = CONTROLLERS.map((name) => {
    const mount = mounts.find((entry) => entry.type === 'cgroup' && entry.superOptions.includes(name));
    const path = own.get(name);
    return mount && path !== undefined ? within(mount, path) : undefined;
  });
  if (v1.every((dir) => dir !== undefined)) {
    const [memory, pids] = v1 as [string, string];
    const result = tryLayout(() => ({ version: 1, memoryParent: makeParent(memory), pidsParent: makeParent(pids) }));
    if (result.layout) return result;
    reasons.push(`cgroup v1: ${result.reason}`);
  } else {
    reasons.push('no cgroup v1 memory and pids hierarchies are mounted');
  }
  return { layout: undefined, reason: reasons.join('; ') };
}

/** Makes the layout, clears groups dead runners left, and makes and removes one group to prove it works. */
function tryLayout(make: () => CgroupLayout): CgroupProbe {
  try {
    const layout = make();
    for (const parent of new Set([layout.memoryParent, layout.pidsParent])) removeDeadRunnersGroups(parent);
    if (!ProcessCgroup.create(layout, { memoryMb: 64, pids: 64 }).removeEmpty())
      throw new Error('a new group could not be removed');
    return { layout };
  } catch (error) {
    return { layout: undefined, reason: (error as Error).message };
  }
}

/**
 * v2 hands controllers only to the children of a cgroup without processes of its own: when this
 * process is alone in its cgroup it moves into a leaf of it, so the cgroup can hand them on.
 */
function prepareV2(own: string): CgroupLayout {
  if (!enabled(own)) {
    try {
      // The root cgroup (and one without processes) takes it as it is.
      write(join(own, 'cgroup.subtree_control'), '+memory +pids');
    } catch {
      const members = readOr(join(own, 'cgroup.procs'), '').split('\n').filter(Boolean);
      if (members.length !== 1 || members[0] !== String(process.pid)) {
        throw new Error(
          `its cgroup ${own} holds other processes, so it cannot hand memory and pids to children; run the runner in a cgroup of its own (systemd: Delegate=yes)`,
        );
      }
      mkdirSync(join(own, SERVER_LEAF), { recursive: true });
      write(join(own, SERVER_LEAF, 'cgroup.procs'), String(process.pid));
      write(join(own, 'cgroup.subtree_control'), '+memory +pids');
    }
  }
  const parent = makeParent(own);
  if (!enabled(parent)) write(join(parent, 'cgroup.subtree_control'), '+memory +pids');
  return { version: 2, memoryParent: parent, pidsParent: parent };
}

function enabled(dir: string): boolean {
  const active = readOr(join(dir, 'cgroup.subtree_control'), '').trim().split(/\s+/);
  return CONTROLLERS.every((name) => active.includes(name));
}

function makeParent(own: string): string {
  const parent = join(own, PARENT);
  mkdirSync(parent, { recursive: true });
  return parent;
}

/** Removes the empty groups of runners no longer alive on this host (a non-empty group refuses). */
function removeDeadRunnersGroups(parent: string): void {
  for (const name of readdirSync(parent)) {
    const match = /^r(\d+)-\d+$/.exec(name);
    if (!match || alive(Number(match[1]))) continue;
    try {
      rmdirSync(join(parent, name));
    } catch {
      // Still holds a process (or another host's runner shares the hierarchy): left alone.
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The cgroup mounts of this process's mount namespace. */
function readMounts(): Mount[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((line) => line.includes(' - cgroup'))
    .map((line) => {
      const [before, after] = line.split(' - ') as [string, string];
      const fields = before.split(' ');
      const [type, , superOptions] = after.split(' ');
      return {
        root: unescapeMount(fields[3]!),
        point: unescapeMount(fields[4]!),
        type: type!,
        superOptions: (superOptions ?? '').split(','),
      };
    });
}

/** This process's cgroup per v1 controller, and under '' its v2 cgroup. */
function readOwnCgroups(): Map<string, string> {
  const own = new Map<string, string>();
  for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    for (const controller of match[1]!.split(',')) own.set(controller, match[2]!);
  }
  return own;
}

/** The directory of `path` (a cgroup path as /proc/self/cgroup shows it) under the mount, when the mount shows it. */
function within(mount: Mount, path: string): string | undefined {
  const root = mount.root === '/' ? '' : mount.root;
  if (path !== root && !path.startsWith(`${root}/`)) return undefined;
  return join(mount.point, path.slice(root.length));
}

function unescapeMount(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}
