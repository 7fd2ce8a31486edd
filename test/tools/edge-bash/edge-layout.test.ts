// What the edge engine sets up once and every command then shares: the interpreter's own files
// (/bin, /usr/bin, /dev, /proc: made once, shared by every command's filesystem, which copies what
// it changes) and, on an edge thread, just-bash's defence in depth held applied. Nothing one
// command does there reaches the next command, nor another tenant's; the defence still stops a
// command as before.
import { Bash, defineCommand, DefenseInDepthBox } from 'just-bash';
import { afterAll, describe, expect, it } from 'vitest';
import { interpreterLayout } from '../../../src/tools/edge-bash/edge-layout.ts';
import { holdDefenceInDepth, interpret } from '../../../src/tools/edge-bash/edge-interpreter.ts';
import type { EdgeSource } from '../../../src/tools/edge-bash/edge-copy.ts';
import type { ManifestEntry } from '../../../src/workspace/manifest-entry.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

/** A workspace of `files` as the engine reads it (one tenant). */
function source(files: Record<string, string>): EdgeSource {
  const entries: ManifestEntry[] = Object.entries(files).map(([path, content]) => ({
    path,
    type: 'file',
    blob: 'b',
    target: null,
    size: bytes(content).byteLength,
    version: 1,
  }));
  return { entries, read: async (path) => bytes(files[path]!) };
}

const run = (command: string) => ({ command, cwd: '', env: {}, timeoutMs: 10_000 });

describe("the interpreter's files, made once", () => {
  it('are the files just-bash itself writes for an interpreter', async () => {
    const layout = interpreterLayout(Bash);
    // just-bash's own in-memory filesystem, given the same layout by its constructor.
    const own = new Bash({ cwd: '/' });
    const paths = (all: string[]) =>
      all.filter((path) => /^\/(bin|usr|dev|proc)(\/|$)/.test(path) && !path.startsWith('/usr/bin/.')).sort();
    expect(paths(layout.getAllPaths())).toEqual(paths(own.fs.getAllPaths()));
    expect(paths(layout.getAllPaths()).length).toBeGreaterThan(150);
  });

  it('are there for every command, and what one command does to them (or to /tmp) the next never sees', async () => {
    const tenant = source({ 'a.txt': 'a\n' });
    const first = await interpret(
      tenant,
      run(
        'echo mine > /bin/mine; echo over > /bin/cat; rm /usr/bin/ls; echo x > /dev/null; ' +
          'echo note > /tmp/note; mkdir /proc/new; echo v > /proc/version; ls /bin | wc -l',
      ),
    );
    expect(first).toMatchObject({ stderr: '', exitCode: 0, changes: [] });
    const second = await interpret(
      source({ 'b.txt': 'b\n' }),
      run(
        'ls /bin/mine /tmp/note /proc/new 2>&1; cat /bin/cat; ls /usr/bin/ls; wc -c < /dev/null; ' +
          'cat /proc/version; head -1 /proc/self/status; ls /tmp | wc -l; ls',
      ),
    );
    expect(second.stdout).toBe(
      [
        'ls: /bin/mine: No such file or directory',
        'ls: /tmp/note: No such file or directory',
        'ls: /proc/new: No such file or directory',
        '#!/bin/bash',
        '# Built-in command: cat',
        '/usr/bin/ls',
        '0',
        'Linux version 5.15.0-generic (just-bash) #1 SMP PREEMPT',
        'Name:\tbash',
        '0',
        'b.txt',
        '',
      ].join('\n'),
    );
    expect(second.exitCode).toBe(0);
  });

  it('leaves no shell state behind: variables, functions, aliases, options, cwd', async () => {
    const tenant = source({ 'd/x.txt': 'x\n' });
    const first = await interpret(
      tenant,
      run(
        'export LEAK=1; OTHER=2; readonly RO=3; f() { echo f; }; alias ll=ls; set -o pipefail; ' +
          'shopt -s nullglob; cd d; echo $PWD',
      ),
    );
    expect(first.stdout).toBe('/workspace/d\n');
    const second = await interpret(
      tenant,
      run(
        'echo "[$LEAK][$OTHER][$RO]"; RO=4 && echo "$RO"; type f 2>&1 | head -1; alias 2>&1; ' +
          'set -o | grep pipefail; shopt nullglob; echo nomatch*; pwd',
      ),
    );
    expect(second.stdout).toBe(
      [
        '[][][]',
        '4',
        'bash: type: f: not found',
        'pipefail        off',
        'nullglob\t\toff',
        'nomatch*',
        '/workspace',
        '',
      ].join('\n'),
    );
  });
});

describe('defence in depth held for a thread', () => {
  afterAll(() => DefenseInDepthBox.resetInstance());

  it('stays applied between commands and still stops a command reaching for the host', async () => {
    await holdDefenceInDepth();
    expect(DefenseInDepthBox.getInstance(true).isActive()).toBe(true);
    await interpret(source({}), run('echo hi'));
    // The command's own handle came and went; the thread's stays.
    expect(DefenseInDepthBox.getInstance(true).isActive()).toBe(true);

    // An untrusted command (as the interpreter's own are run in the command's context) reaching for
    // the Function constructor, as a script escaping the interpreter would.
    const escape = defineCommand(
      'escape',
      async () => {
        const make = globalThis.Function as unknown as (body: string) => () => unknown;
        return { stdout: `${String(make('return 1')())}\n`, stderr: '', exitCode: 0 };
      },
      { trusted: false },
    );
    const bash = new Bash({ customCommands: [escape] });
    const result = await bash.exec('escape');
    expect(result.exitCode).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/security violation|blocked/i);
    // Outside a command (this test's own code) the thread is trusted, as its server code is.
    expect(new Function('return 2')()).toBe(2);
  });
});
