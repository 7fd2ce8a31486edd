// The unprivileged user commands run as when the runner runs as root, and handing a workspace copy over to it.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { findUtility } from './command-environment.ts';

const run = promisify(execFile);

export interface CommandUser {
  uid: number;
  gid: number;
}

/** The user commands run as: `uid` (and the group of the same number) when this process is root; else none, they run as the runner's user. */
export function commandUserFor(uid: number): CommandUser | undefined {
  return process.getuid?.() === 0 ? { uid, gid: uid } : undefined;
}

/**
 * setpriv's arguments that become the user for good before bash runs: real, effective and saved
 * ids, no supplementary groups, no capabilities (nor any way to regain one), no setuid gains.
 */
export function becomeUserArgs(setpriv: string, user: CommandUser): string[] {
  return [
    setpriv,
    '--reuid',
    String(user.uid),
    '--regid',
    String(user.gid),
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--no-new-privs',
    '--',
  ];
}

/**
 * Makes every entry of a workspace copy owned by the user, so its commands can change what the
 * runner wrote there. `chown -R -P -h` (coreutils) walks the copy without following any link, a
 * directory a running command swaps for one meanwhile included (its walk opens each directory
 * relative to its parent with O_NOFOLLOW and checks it is the one it listed), changes links
 * themselves, and runs off the runner's event loop. The runner is root whenever there is a user.
 */
export async function handOver(root: string, user: CommandUser): Promise<void> {
  const chown = findUtility('chown');
  if (chown === undefined) throw new Error('chown (coreutils) is missing on this runner; install coreutils');
  try {
    // Only what the runner (root) wrote needs it: the rest is the user's already, and is only looked at.
    await run(chown, ['-R', '-P', '-h', '--from=0', `${user.uid}:${user.gid}`, '--', root]);
  } catch (error) {
    const stderr = String((error as { stderr?: string }).stderr ?? '').trim();
    // Entries a running command removed while the walk went on are no one's to hand over.
    const vanished = stderr !== '' && stderr.split('\n').every((line) => line.endsWith('No such file or directory'));
    if (!vanished)
      throw new Error(`could not hand the workspace copy to uid ${user.uid}: ${stderr || (error as Error).message}`);
  }
}
