// Where a runner's key comes from: which source wins, and which key files are refused.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ARGV_KEY_WARNING, readRunnerKey, RunnerKeyError } from '../../src/runner/node/runner-key.ts';

const dir = mkdtempSync(join(tmpdir(), 'toolgate-runner-key-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A key file with exactly `mode`, whatever the umask would take from it. */
function keyFile(name: string, content: string, mode: number): string {
  const path = join(dir, name);
  writeFileSync(path, content, { mode: 0o600, flag: 'wx' });
  chmodSync(path, mode);
  return path;
}

const refusal = (sources: Parameters<typeof readRunnerKey>[0]): string => {
  try {
    readRunnerKey(sources);
  } catch (error) {
    expect(error).toBeInstanceOf(RunnerKeyError);
    return (error as Error).message;
  }
  throw new Error('expected the key to be refused');
};

describe('readRunnerKey', () => {
  it('takes TOOLGATE_RUNNER_KEY, and a flag over it; only --key warns', () => {
    expect(readRunnerKey({ env: ' tg_env\n' })).toEqual({ key: 'tg_env' });
    const file = keyFile('flag-wins.key', 'tg_file\n', 0o600);
    expect(readRunnerKey({ file, env: 'tg_env' })).toEqual({ key: 'tg_file' });
    expect(readRunnerKey({ flag: 'tg_argv', env: 'tg_env' })).toEqual({ key: 'tg_argv', warning: ARGV_KEY_WARNING });
  });

  it('reads a key file of mode 0600 or 0400, trimmed', () => {
    expect(readRunnerKey({ file: keyFile('owner-rw.key', '  tg_secret \n', 0o600) }).key).toBe('tg_secret');
    expect(readRunnerKey({ file: keyFile('owner-r.key', 'tg_secret', 0o400) }).key).toBe('tg_secret');
  });

  it('refuses a key file group or others may access, an empty one, a directory and a missing one', () => {
    for (const mode of [0o644, 0o640, 0o604, 0o620, 0o660]) {
      expect(refusal({ file: keyFile(`mode-${mode.toString(8)}.key`, 'tg_secret', mode) })).toContain('chmod 600');
    }
    expect(refusal({ file: keyFile('empty.key', ' \n\t', 0o600) })).toContain('is empty');
    expect(refusal({ file: dir })).toContain('not a regular file');
    expect(refusal({ file: join(dir, 'absent.key') })).toContain('ENOENT');
  });

  it('refuses no key at all, an empty --key, and both flags at once', () => {
    expect(refusal({})).toContain('TOOLGATE_RUNNER_KEY');
    expect(refusal({ env: '  ' })).toContain('TOOLGATE_RUNNER_KEY');
    expect(refusal({ flag: '' })).toContain('--key is empty');
    expect(refusal({ flag: 'tg_a', file: keyFile('both.key', 'tg_b', 0o600) })).toContain('not both');
  });
});
