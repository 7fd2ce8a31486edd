// Gives each command a cgroup of its own, below a parent toolgate owns, holding its memory and process limits.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProcessLimits } from './sandbox-settings.ts';

export interface CgroupLayout {
  version: 1 | 2;
  /** The toolgate parent in each hierarchy holding a limit (v2: one directory for both). */
  memoryParent: string;
  pidsParent: string;
}

/** How often, and how far apart, an emptied group's removal is retried while its last processes exit. */
const REMOVE_ATTEMPTS = 50;
const REMOVE_INTERVAL_MS = 100;

let sequence = 0;

/** One command's cgroup: made with its limits before the command starts, removed after it ends. */
export class ProcessCgroup {
  private readonly dirs: string[];

  private constructor(
    private readonly layout: CgroupLayout,
    private readonly name: string,
  ) {
    this.dirs = [...new Set([join(layout.memoryParent, name), join(layout.pidsParent, name)])];
  }

  static create(layout: CgroupLayout, limits: Pick<ProcessLimits, 'memoryMb' | 'pids'>): ProcessCgroup {
    sequence += 1;
    const group = new ProcessCgroup(layout, `r${process.pid}-${sequence}`);
    try {
      for (const dir of group.dirs) mkdirSync(dir);
      group.limit(limits);
    } catch (error) {
      group.removeEmpty();
      throw error;
    }
    return group;
  }

  /** The files a launcher writes its own pid into, so it and all it starts belong to the group. */
  get procsFiles(): string[] {
    return this.dirs.map((dir) => join(dir, 'cgroup.procs'));
  }

  /** Every process in the group now. */
  members(): number[] {
    const pids = new Set<number>();
    for (const file of this.procsFiles) {
      for (const line of readOr(file, '').split('\n')) if (line !== '') pids.add(Number(line));
    }
    return [...pids];
  }

  /** SIGKILL to everything in the group: whatever it forked, however it detached. */
  kill(): void {
    if (this.layout.version === 2 && existsSync(join(this.dirs[0]!, 'cgroup.kill'))) {
      write(join(this.dirs[0]!, 'cgroup.kill'), '1', true);
      return;
    }
    for (const pid of this.members()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
  }

  /**
   * Kills what is left and removes the group, retrying while its last processes exit; never
   * rejects. The removal runs off the event loop: a v1 memory group gives its charged pages back
   * on rmdir, which may take a while.
   */
  async remove(): Promise<void> {
    for (let attempt = 0; attempt < REMOVE_ATTEMPTS; attempt += 1) {
      this.kill();
      const left = await Promise.all(
        this.dirs.map((dir) =>
          rmdir(dir).then(
            () => false,
            (error: NodeJS.ErrnoException) => error.code !== 'ENOENT',
          ),
        ),
      );
      if (!left.includes(true)) return;
      await new Promise((resolve) => setTimeout(resolve, REMOVE_INTERVAL_MS));
    }
  }

  private limit(limits: Pick<ProcessLimits, 'memoryMb' | 'pids'>): void {
    const bytes = String(limits.memoryMb * 1024 * 1024);
    const [memory, pids] = [join(this.layout.memoryParent, this.name), join(this.layout.pidsParent, this.name)];
    if (this.layout.version === 2) {
      write(join(memory, 'memory.max'), bytes);
      // Past its memory a command is killed, not pushed into swap where it could keep growing.
      write(join(memory, 'memory.swap.max'), '0', true);
    } else {
      write(join(memory, 'memory.limit_in_bytes'), bytes);
      write(join(memory, 'memory.memsw.limit_in_bytes'), bytes, true);
    }
    write(join(pids, 'pids.max'), String(limits.pids));
  }

  /** Removes the group's directories (a group still holding a process refuses); true once none is left. */
  removeEmpty(): boolean {
    let left = false;
    for (const dir of this.dirs) {
      try {
        rmdirSync(dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') left = true;
      }
    }
    return !left;
  }
}

/** Writes a cgroup control file; an `optional` one the kernel may lack is skipped when it cannot be written. */
export function write(file: string, value: string, optional = false): void {
  try {
    writeFileSync(file, value);
  } catch (error) {
    if (optional) return;
    throw new Error(`could not write ${value} to ${file}: ${(error as Error).message}`);
  }
}

/** A cgroup control file's text, or `fallback` when it cannot be read. */
export function readOr(file: string, fallback: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}
