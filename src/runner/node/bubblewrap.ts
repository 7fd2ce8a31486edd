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

let located: { path: string | undefined } | undefined;
let rootLayout: string[] | undefined;

/** The bubblewrap binary: /usr/bin/bwrap, else the first `bwrap` on the runner's PATH; undefined when absent. */
export function locateBubblewrap(): string | undefined {
  located ??= { path: findBubblewrap() };
  return located.path;
}

/** bwrap's arguments: the whole command line after the binary. */
export function bubblewrapArgs(options: BubblewrapCommand): string[] {
  const args = ['--unshare-all'];
  if (options.network) args.push('--share-net');
  args.push('--die-with-parent', '--new-session', '--clearenv', '--cap-drop', 'ALL');
  args.push('--ro-bind', '/usr', '/usr', ...systemDirArgs());
  for (const path of options.network ? [...ETC_ALWAYS, ...ETC_NETWORK] : ETC_ALWAYS) {
    args.push('--ro-bind-try', path, path);
  }
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  args.push('--bind', options.workspaceDir, SANDBOX_WORKSPACE, '--chdir', options.cwd);
  for (const [name, value] of Object.entries(options.env)) args.push('--setenv', name, value);
  args.push('/bin/bash', '--noprofile', '--norc', '-c', options.command);
  return args;
}

function findBubblewrap(): string | undefined {
  const candidates = ['/usr/bin/bwrap', ...(process.env.PATH ?? '').split(':').filter((dir) => dir !== '').map((dir) => join(dir, 'bwrap'))];
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
