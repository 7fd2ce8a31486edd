// What a command starts with besides its line: its environment, its working directory, and which system programs run it.
import { accessSync, constants, statSync } from 'node:fs';
import { join } from 'node:path';
import { ToolError } from '../../core/errors.ts';

export const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The minimal environment plus the caller's variables, which may override it; a terminal gets a terminal's TERM. */
export function commandEnvironment(
  pwd: string,
  callerEnv: Record<string, string>,
  terminal = false,
): Record<string, string> {
  for (const [name, value] of Object.entries(callerEnv)) {
    if (!ENV_NAME.test(name)) {
      throw new ToolError(
        'invalid_argument',
        `Environment variable name "${name}" is invalid; use letters, digits and underscores, not starting with a digit.`,
        {
          field: 'env',
          name,
        },
      );
    }
    if (value.includes('\0')) {
      throw new ToolError('invalid_argument', `Environment variable "${name}" contains a NUL character; remove it.`, {
        field: 'env',
        name,
      });
    }
  }
  return {
    PATH: DEFAULT_PATH,
    HOME: '/tmp',
    LANG: 'C.UTF-8',
    TERM: terminal ? 'xterm-256color' : 'dumb',
    PWD: pwd,
    ...callerEnv,
  };
}

/** The cwd as path segments below the workspace root; refuses one that climbs out. */
export function cwdSegments(cwd: string): string[] {
  const segments = cwd.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) {
    throw new ToolError('path_outside_workspace', `The cwd "${cwd}" leaves the workspace; use a path inside it.`, {
      cwd,
    });
  }
  return segments;
}

export function requireDirectory(hostPath: string, cwd: string): void {
  let isDirectory = false;
  try {
    isDirectory = statSync(hostPath).isDirectory();
  } catch {
    // Missing: reported below like a file.
  }
  if (!isDirectory) {
    throw new ToolError(
      'not_found',
      `The cwd "${cwd}" is not a directory in the workspace; create it or pick another.`,
      { cwd },
    );
  }
}

/** bash from the default PATH, so a caller's PATH never decides which shell runs the command. */
export function hostBash(): string {
  for (const dir of DEFAULT_PATH.split(':')) {
    try {
      accessSync(join(dir, 'bash'), constants.X_OK);
      return join(dir, 'bash');
    } catch {
      // Not in this directory.
    }
  }
  return '/bin/bash';
}

/** A system program (util-linux, coreutils) from the system directories, never from a caller's PATH. */
export function findUtility(name: string): string | undefined {
  return ['/usr/bin', '/bin', '/usr/sbin', '/sbin']
    .map((dir) => `${dir}/${name}`)
    .find((path) => {
      try {
        accessSync(path, constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}
