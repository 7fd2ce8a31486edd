// Locates bubblewrap and builds the command line that runs one bash command with only the workspace writable.
import { accessSync, constants, lstatSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { SANDBOX_WORKSPACE } from './mirror-disk.ts';

export interface BubblewrapCommand {
  /** Host directory bound read-write at `/workspace`. */
  workspaceDir: string;
  /** Absolute working directory inside the sandbox. */
  cwd: string;
  /** The command's whole environment; names are already validated. */
  env: Readonly<Record<string, string>>;
  network: boolean;
  command: string;
  /** The program line run inside, in place of `/bin/bash --noprofile --norc -c command`. */
  argv?: readonly string[];
  /**
   * The line changes to another uid first (the runner is root): the sandbox is then set up without
   * a user namespace, whose single mapping would leave no other uid to change to, and keeps only
   * the capabilities that change needs, which the change itself drops.
   */
  changesUser?: boolean;
}

/** Top-level names that merged-/usr systems make links into /usr and older ones keep as directories. */
const ROOT_SYSTEM_DIRS = ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];

/**
 * Read-only /etc files every command may need: user and group names, loopback names, the
 * dynamic linker cache, the time zone, and Debian's alternatives (awk, which and friends link there).
 */
const ETC_ALWAYS = [
  '/etc/passwd',
  '/etc/group',
  '/etc/hosts',
  '/etc/nsswitch.conf',
  '/etc/ld.so.cache',
  '/etc/localtime',
  '/etc/alternatives',
];

/** Name resolution and the public CA certificates, only when the network is shared (never /etc/ssl/private). */
const ETC_NETWORK = [
  '/etc/resolv.conf',
  '/etc/host.conf',
  '/etc/gai.conf',
  '/etc/services',
  '/etc/protocols',
  '/etc/ssl/certs',
  '/etc/ssl/openssl.cnf',
  '/etc/ca-certificates',
  '/etc/pki/tls/certs',
  '/etc/pki/ca-trust',
];

/** What to install where bubblewrap is missing, for messages that must say so. */
export const INSTALL_BUBBLEWRAP = 'apt-get install bubblewrap (dnf install bubblewrap, apk add bubblewrap)';

const located = new Map<string, string | undefined>();
let rootLayout: string[] | undefined;

/**
 * The bubblewrap binary: `configured` (TOOLGATE_BWRAP_PATH) when given, else /usr/bin/bwrap, else
 * the first `bwrap` on the runner's PATH; undefined when absent.
 */
export function locateBubblewrap(configured?: string): string | undefined {
  const key = configured ?? '';
  if (!located.has(key)) located.set(key, findBubblewrap(configured));
  return located.get(key);
}

/** bwrap's arguments: the whole command line after the binary. */
export function bubblewrapArgs(options: BubblewrapCommand): string[] {
  const args = options.changesUser
    ? ['--unshare-ipc', '--unshare-pid', '--unshare-uts', '--unshare-cgroup-try']
    : ['--unshare-all'];
  if (options.changesUser && !options.network) args.push('--unshare-net');
  if (!options.changesUser && options.network) args.push('--share-net');
  args.push('--die-with-parent', '--new-session', '--clearenv', '--cap-drop', 'ALL');
  // Entering the working directory, which is the command user's own, takes CAP_DAC_READ_SEARCH until the change.
  if (options.changesUser)
    args.push(
      '--cap-add',
      'CAP_SETUID',
      '--cap-add',
      'CAP_SETGID',
      '--cap-add',
      'CAP_SETPCAP',
      '--cap-add',
      'CAP_DAC_READ_SEARCH',
    );
  args.push('--ro-bind', '/usr', '/usr', ...systemDirArgs());
  const etc = options.network ? [...ETC_ALWAYS, ...ETC_NETWORK] : ETC_ALWAYS;
  // The directories above them are made searchable by every user first: made implicitly they take
  // the runner's umask (077), and a command running as another user could not reach /etc/alternatives
  // (awk, editor and pager names are links through it).
  for (const directory of parentDirectories(etc)) args.push('--perms', '0755', '--dir', directory);
  for (const path of etc) args.push('--ro-bind-try', path, path);
  // /tmp and /dev/shm are everyone's, sticky, as on a host: the command may run as a user other than the one setting up.
  args.push(
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--perms',
    '1777',
    '--tmpfs',
    '/dev/shm',
    '--perms',
    '1777',
    '--tmpfs',
    '/tmp',
  );
  args.push('--bind', options.workspaceDir, SANDBOX_WORKSPACE, '--chdir', options.cwd);
  for (const [name, value] of Object.entries(options.env)) args.push('--setenv', name, value);
  args.push(...(options.argv ?? ['/bin/bash', '--noprofile', '--norc', '-c', options.command]));
  return args;
}

/** Every directory above the paths (not /), parents first, each once. */
function parentDirectories(paths: readonly string[]): string[] {
  const directories = new Set<string>();
  for (const path of paths)
    for (let slash = path.indexOf('/', 1); slash > 0; slash = path.indexOf('/', slash + 1))
      directories.add(path.slice(0, slash));
  return [...directories];
}

function findBubblewrap(configured: string | undefined): string | undefined {
  const path = (process.env.PATH ?? '')
    .split(':')
    .filter((dir) => dir !== '')
    .map((dir) => join(dir, 'bwrap'));
  const candidates = configured !== undefined ? [configured] : ['/usr/bin/bwrap', ...path];
  return candidates.find((path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Mirrors the host's /bin, /lib, ... in the sandbox: the same link into /usr, or a read-only bind of the directory. */
function systemDirArgs(): string[] {
  rootLayout ??= ROOT_SYSTEM_DIRS.flatMap((name) => {
    const path = `/${name}`;
    try {
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) return ['--symlink', readlinkSync(path), path];
      if (stat.isDirectory()) return ['--ro-bind', path, path];
    } catch {
      // Absent on this host: the sandbox lacks it too.
    }
    return [];
  });
  return rootLayout;
}
