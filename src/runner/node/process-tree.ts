// Finds and signals every process of one command on this host, read from /proc, so none outlives a kill.
//
// A command's processes are found three ways, because each alone misses some: the descendants
// of its top process (parent pids), the members of its process group (background jobs whose
// parent already exited), and the holders of its stdin/stdout/stderr pipes (a descendant that
// called `setsid` after its parent exited has neither link left, but usually still holds the
// output pipe). Everything below any of those is included too.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export interface HostProcess {
  pid: number;
  ppid: number;
  pgid: number;
}

export interface TreeQuery {
  /** The top process: it and all its descendants. */
  rootPid?: number;
  /** Every member of this process group, and their descendants. */
  processGroup?: number;
  /** `socket:[n]` / `pipe:[n]` identities: every process holding one, and their descendants. */
  stdioTargets?: readonly string[];
}

/** Every live (not zombie) process on the host; empty where /proc is absent. */
export function listHostProcesses(): HostProcess[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const processes: HostProcess[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readOrUndefined(`/proc/${name}/stat`);
    if (stat === undefined) continue;
    // `pid (comm) state ppid pgrp ...`; comm may itself hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const state = fields[0];
    if (state === 'Z' || state === 'X' || state === 'x') continue;
    processes.push({ pid: Number(name), ppid: Number(fields[1]), pgid: Number(fields[2]) });
  }
  return processes;
}

/** The pipe or socket identities of a process's stdin, stdout and stderr (files and ttys are shared, so never). */
export function readStdioTargets(pid: number): string[] {
  const targets: string[] = [];
  for (const fd of [0, 1, 2]) {
    const target = linkOrUndefined(`/proc/${pid}/fd/${fd}`);
    if (target !== undefined && /^(socket|pipe):\[\d+\]$/.test(target)) targets.push(target);
  }
  return targets;
}

/** The processes a query names, with all their descendants; never this process itself. */
export function findProcessTree(query: TreeQuery): HostProcess[] {
  const table = listHostProcesses();
  const targets = new Set(query.stdioTargets ?? []);
  const seeds = table.filter(
    (entry) =>
      entry.pid === query.rootPid ||
      (query.processGroup !== undefined && entry.pgid === query.processGroup) ||
      (targets.size > 0 && entry.pid !== process.pid && holdsAny(entry.pid, targets)),
  );
  const children = new Map<number, HostProcess[]>();
  for (const entry of table) {
    const siblings = children.get(entry.ppid);
    if (siblings) siblings.push(entry);
    else children.set(entry.ppid, [entry]);
  }
  const found = new Map<number, HostProcess>();
  const queue = [...seeds];
  for (let entry = queue.pop(); entry !== undefined; entry = queue.pop()) {
    if (found.has(entry.pid) || entry.pid === process.pid || entry.pid <= 1) continue;
    found.set(entry.pid, entry);
    queue.push(...(children.get(entry.pid) ?? []));
  }
  return [...found.values()];
}

/** Sends a signal to each process; ones already gone are skipped. */
export function signalProcesses(pids: Iterable<number>, signal: NodeJS.Signals): void {
  for (const pid of pids) {
    if (pid <= 1 || pid === process.pid) continue;
    try {
      process.kill(pid, signal);
    } catch {
      // Gone already (ESRCH), or not ours to signal (EPERM): nothing left to do for it.
    }
  }
}

/** Sends a signal to a whole process group; an empty group is skipped. */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals): void {
  if (pgid <= 1) return;
  try {
    process.kill(-pgid, signal);
  } catch {
    // No member left (ESRCH): nothing to signal.
  }
}

function holdsAny(pid: number, targets: ReadonlySet<string>): boolean {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  return fds.some((fd) => {
    const target = linkOrUndefined(`/proc/${pid}/fd/${fd}`);
    return target !== undefined && targets.has(target);
  });
}

function readOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function linkOrUndefined(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}
