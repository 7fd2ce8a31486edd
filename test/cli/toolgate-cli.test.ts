// The toolgate command as a user runs it (node bin/toolgate.js) against a real server: output, errors, exit codes.
import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/cli-io.ts';
import { main } from '../../src/cli/main.ts';
import { freePort } from '../support/runner-process.ts';
import { repoRoot, useServer } from '../support/server-process.ts';
import { failure } from '../support/tool-outcome.ts';

const server = useServer();
const WS = 'cli';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `toolgate <args>` with only PATH and HOME from this process, plus `env`; the server's URL
 * and admin key come from TOOLGATE_URL and TOOLGATE_API_KEY unless `env` says otherwise.
 */
function toolgate(args: string[], options: { env?: Record<string, string>; stdin?: string } = {}): Promise<Run> {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    TOOLGATE_URL: server.url,
    TOOLGATE_API_KEY: server.key,
    ...options.env,
  };
  const child = spawn(process.execPath, ['bin/toolgate.js', ...args], {
    cwd: repoRoot,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.end(options.stdin ?? '');
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const json = (run: Run) => JSON.parse(run.stdout);

/**
 * Runs the command line in this process, through the same `main` that bin/toolgate.js runs, with
 * the same environment as `toolgate` gives: each spawned command costs most of a second of CPU
 * loading the program, and the table of usage answers is the parser's, not the process's (the
 * process's own exit codes and streams are the `as a process` cases below).
 */
async function inProcess(args: string[], env: Record<string, string> = {}): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    env: { TOOLGATE_URL: server.url, TOOLGATE_API_KEY: server.key, ...env },
    stdoutIsTty: false,
    out: (text) => void (stdout += text),
    stdout: new Writable({ write: (chunk, _encoding, done) => void ((stdout += String(chunk)), done()) }),
    err: (text) => void (stderr += text),
    readStdin: async () => '',
  };
  const code = await main(args, io);
  return { code: code ?? null, stdout, stderr };
}

beforeAll(async () => {
  await server.client.putWorkspace(WS);
});

describe('help and usage errors', () => {
  it.each([
    [['--help'], 0, 'Usage: toolgate <command>'],
    [['runner', '--help'], 0, 'Usage: toolgate runner'],
    [['frob'], 2, 'unknown command "frob"'],
  ])('as a process, toolgate %j exits %i and prints %j', async (args, code, text) => {
    const run = await toolgate(args);
    expect(run.code).toBe(code);
    expect(code === 0 ? run.stdout : run.stderr).toContain(text);
    expect(code === 0 ? run.stderr : run.stdout).toBe('');
  });

  it.each([
    [['--help'], 'Usage: toolgate <command>'],
    [['help'], 'Usage: toolgate <command>'],
    [['serve', '--help'], 'Usage: toolgate serve'],
    [['keys', '--help'], 'Usage: toolgate keys <create|list|revoke>'],
    [['keys', 'create', '--help'], 'Usage: toolgate keys create'],
    [['keys', 'list', '--help'], 'Usage: toolgate keys list'],
    [['keys', 'revoke', '--help'], 'Usage: toolgate keys revoke'],
    [['call', '--help'], 'Usage: toolgate call <workspace> <tool>'],
    [['call', 'ws', 'read_file', '--bogus', '-h'], 'Usage: toolgate call <workspace> <tool>'],
  ])('toolgate %j prints its usage and exits 0', async (args, usage) => {
    const run = await inProcess(args);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout.startsWith(usage)).toBe(true);
  });

  it.each([
    [['frob'], 'unknown command "frob"', 'Usage: toolgate <command>'],
    [['keys'], 'keys needs a subcommand', 'Usage: toolgate keys'],
    [['keys', 'rotate'], 'unknown keys subcommand "rotate"', 'Usage: toolgate keys'],
    [['keys', 'list', '--verbose'], "Unknown option '--verbose'", 'Usage: toolgate keys list'],
    [['keys', 'create', '--role', 'agent'], 'needs --name, --workspaces', 'Usage: toolgate keys create'],
    [['keys', 'create', '--name', 'x', '--json', '{}'], 'either as --json or as flags', 'Usage: toolgate keys create'],
    [['keys', 'revoke'], 'missing <key id>', 'Usage: toolgate keys revoke'],
    [['call', WS], 'missing <tool>', 'Usage: toolgate call'],
    [['call', WS, 'read_file', 'extra'], 'unexpected argument "extra"', 'Usage: toolgate call'],
    [['call', WS, 'read_file', '--json', '{"path": '], '--json is not valid JSON', 'Usage: toolgate call'],
    [['call', WS, 'read_file', '--json', '["a.txt"]'], '--json must be a JSON object', 'Usage: toolgate call'],
    [['call', WS, 'read_file', '--json'], "Option '--json <value>' argument missing", 'Usage: toolgate call'],
    [
      ['call', WS, 'write_file', '--wait', 'soon', '--json', '{}'],
      '--wait must be a whole number',
      'Usage: toolgate call',
    ],
    [['call', WS, 'read_file', '--url', 'ftp://example.com'], 'is not an http or https URL', 'Usage: toolgate call'],
    [['serve', '--port', '9'], 'serve takes no arguments', 'Usage: toolgate serve'],
  ])('toolgate %j is a usage error: exit 2, the reason and the usage on stderr', async (args, reason, usage) => {
    const run = await inProcess(args);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(reason);
    expect(run.stderr).toContain(usage);
  });

  it('needs a key: none in flags or environment is a usage error', async () => {
    const run = await inProcess(['keys', 'list'], { TOOLGATE_API_KEY: '' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('no API key: pass --key <key> or set TOOLGATE_API_KEY');
  });
});

describe('call', () => {
  it('writes and reads a file, printing the server answer as JSON', async () => {
    const written = await toolgate([
      'call',
      WS,
      'write_file',
      '--json',
      '{"path": "notes/a.txt", "content": "hello\\n"}',
    ]);
    expect(written).toMatchObject({ code: 0, stderr: '' });
    expect(json(written)).toEqual({
      result: {
        resolvedPath: 'notes/a.txt',
        mode: 'overwrite',
        created: true,
        appended: false,
        bytesWritten: 6,
        version: expect.any(String),
      },
    });
    const read = await toolgate(['call', WS, 'read_file', '--json', '{"path": "notes/a.txt"}']);
    expect(read).toMatchObject({ code: 0, stderr: '' });
    expect(json(read).result).toMatchObject({
      path: 'notes/a.txt',
      content: 'hello\n',
      totalLines: 1,
      version: json(written).result.version,
    });
    const searched = await toolgate(['call', WS, 'grep', '--json', '{"pattern": "hel+o", "outputMode": "content"}']);
    expect(searched).toMatchObject({ code: 0, stderr: '' });
    expect(json(searched)).toEqual({
      result: { matches: [{ path: 'notes/a.txt', line: 1, text: 'hello' }], files: 1, truncated: false },
    });
    const globbed = await toolgate(['call', WS, 'glob', '--json', '{"pattern": "notes/*.txt"}']);
    expect(json(globbed)).toEqual({ result: { paths: ['notes/a.txt'], truncated: false } });
  });

  it('reads the arguments from stdin with --json -, and takes --url and --key over the environment', async () => {
    const patch = '*** Begin Patch\n*** Add File: patched.txt\n+from stdin\n*** End Patch\n';
    const run = await toolgate(['call', WS, 'apply_patch', '--json', '-', '--url', server.url, '--key', server.key], {
      stdin: JSON.stringify({ patch }),
      env: { TOOLGATE_URL: 'http://127.0.0.1:9', TOOLGATE_API_KEY: 'tg_wrong' },
    });
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(json(run).result.summary).toBe('A patched.txt');
    expect((await server.client.readFile(WS, { path: 'patched.txt' })).result?.content).toBe('from stdin\n');
  });

  it('exits 1 with the contract code and message on stderr when the server answers an error', async () => {
    const run = await toolgate(['call', WS, 'read_file', '--json', '{"path": "missing.txt"}']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('not_found (HTTP 404): missing.txt does not exist');
    expect(run.stderr).toContain('details: {"path":"missing.txt"}');
    const unknownTool = await toolgate(['call', WS, 'read_files', '--json', '{}']);
    expect(unknownTool.code).toBe(1);
    expect(unknownTool.stderr).toContain('not_found');
    expect(unknownTool.stderr).toContain('read_file, write_file, apply_patch, bash');
  });

  it('exits 1 with a message naming the URL when the server cannot be reached', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const run = await toolgate(['call', WS, 'read_file', '--json', '{"path": "a"}'], { env: { TOOLGATE_URL: url } });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`Could not reach the toolgate server at ${url}`);
    expect(run.stderr).toContain('ECONNREFUSED');
  });

  it('prints a pending approval, says so on stderr and exits 1: nothing ran', async () => {
    const agent = await server.client.createKey({ name: 'cli agent', role: 'agent', workspaces: [WS] });
    const run = await toolgate(
      ['call', WS, 'write_file', '--wait', '100', '--json', '{"path": "held.txt", "content": "x"}'],
      { env: { TOOLGATE_API_KEY: agent.secret } },
    );
    expect(run.code).toBe(1);
    const { approval } = json(run);
    expect(approval).toMatchObject({ status: 'pending', tool: 'write_file', workspace: WS });
    expect(run.stderr).toContain(`approval_pending: write_file in ${WS} waits for approval ${approval.id}`);
    expect((await failure(server.client.readFile(WS, { path: 'held.txt' }))).code).toBe('not_found');
  });
});

describe('keys', () => {
  it('creates, lists and revokes a key; the revoked key then gets 401 through call', async () => {
    const created = await toolgate(
      [
        'keys',
        'create',
        '--name',
        'cli key',
        '--role',
        'agent',
        '--workspaces',
        `${WS},other`,
        '--tools',
        'read_file, write_file',
        '--approval-mode',
        'auto',
        '--url',
        server.url,
        '--key',
        server.key,
      ],
      { env: { TOOLGATE_URL: '', TOOLGATE_API_KEY: '' } },
    );
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const key = json(created);
    expect(key).toMatchObject({
      name: 'cli key',
      role: 'agent',
      workspaces: [WS, 'other'],
      tools: ['read_file', 'write_file'],
      approvalMode: 'auto',
    });
    expect(key.secret).toMatch(/^tg_/);

    const listed = await toolgate(['keys', 'list']);
    expect(listed.code).toBe(0);
    const entry = json(listed).keys.find((item: { id: string }) => item.id === key.id);
    expect(entry).toMatchObject({ name: 'cli key', role: 'agent' });
    expect(entry).not.toHaveProperty('secret');

    const asKey = { env: { TOOLGATE_API_KEY: key.secret } };
    expect(
      (await toolgate(['call', WS, 'write_file', '--json', '{"path": "by-key.txt", "content": "k"}'], asKey)).code,
    ).toBe(0);

    const revoked = await toolgate(['keys', 'revoke', key.id]);
    expect(revoked).toMatchObject({ code: 0, stdout: '' });
    expect(revoked.stderr).toContain(`key ${key.id} revoked`);
    const refused = await toolgate(['call', WS, 'read_file', '--json', '{"path": "by-key.txt"}'], asKey);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('unauthorized (HTTP 401)');
    expect(json(await toolgate(['keys', 'list'])).keys.map((item: { id: string }) => item.id)).not.toContain(key.id);
    const again = await toolgate(['keys', 'revoke', key.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('not_found');
  });

  it('creates a key from a whole --json body, and reports the server refusing a bad one', async () => {
    const body = {
      name: 'from json',
      role: 'agent',
      workspaces: [WS],
      rules: [{ tool: 'bash', action: 'exec', decision: 'approve' }],
      quota: { calls: 10, period: 'day' },
    };
    const created = await toolgate(['keys', 'create', '--json', JSON.stringify(body)]);
    expect(created.code).toBe(0);
    expect(json(created)).toMatchObject({ name: 'from json', rules: body.rules, quota: body.quota });
    const refused = await toolgate(['keys', 'create', '--name', 'x', '--role', 'overlord', '--workspaces', WS]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('invalid_argument (HTTP 400)');
    expect(refused.stderr).toContain('role');
  });

  it('refuses key management to an agent key: exit 1 with forbidden', async () => {
    const agent = await server.client.createKey({ name: 'plain agent', role: 'agent', workspaces: [WS] });
    const run = await toolgate(['keys', 'create', '--name', 'x', '--role', 'admin', '--workspaces', '*'], {
      env: { TOOLGATE_API_KEY: agent.secret },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('forbidden (HTTP 403)');
  });
});
