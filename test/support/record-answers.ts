// The calls test/http/recorded-answers.test.ts records (TOOLGATE_RECORD_ANSWERS=1) into
// test/fixtures/recorded-answers/calls.json. The replay never reads this list: it sends the
// requests as the fixture holds them, so editing this list changes nothing until a new recording.
//
// A request is sent as written, in order, against one fresh server started with `serverEnv`.
// `{{name}}` in a path, header or body is the real value behind the placeholder `<name>` that the
// normaliser gave an earlier answer: `{{secret#2}}` is the second key secret answered, `{{apr#1}}`
// the first approval id, `{{commit#1}}` the first checkpoint id, `{{ws#1}}` the first workspace
// incarnation seen in a version string (so `"2.{{ws#1}}"` is that workspace's version 2).
import { createHmac } from 'node:crypto';

export interface RecordedRequest {
  method: string;
  path: string;
  /** Absent: `Bearer <the admin key>`; null: no Authorization header; else the header's value. */
  auth?: string | null;
  headers?: Record<string, string>;
  /** A JSON body: sent as JSON.stringify(json), with content-type application/json unless `headers` name another. */
  json?: unknown;
  /** The raw body text. */
  body?: string;
  /** A body that is not UTF-8. */
  bodyBase64?: string;
  /** A large body, built when sent: prefix, then unit repeated count times, then suffix. */
  bodyRepeat?: { prefix: string; unit: string; count: number; suffix: string };
}

export interface CallSpec {
  name: string;
  request: RecordedRequest;
}

/** The server's configuration for the recording (and the replay): small limits, so the limit cases stay small. */
export const serverEnv: Record<string, string> = {
  TOOLGATE_MAX_BODY_BYTES: '65536',
  TOOLGATE_MAX_FILE_BYTES: '16384',
  TOOLGATE_READ_ONLY_ROOTS: '.skills=skills',
};

const JSON_TYPE = { 'content-type': 'application/json' };
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const HOOK_SECRET = 'a long shared hook secret, 0123456789';

const calls: CallSpec[] = [];
let currentGroup = '';

function group(name: string): void {
  currentGroup = name;
}

function raw(name: string, request: RecordedRequest): void {
  const full = `${currentGroup}: ${name}`;
  if (calls.some((call) => call.name === full)) throw new Error(`two calls are named ${full}`);
  calls.push({ name: full, request });
}

/** A call with a JSON body (encoded here) or none. */
function call(
  name: string,
  method: string,
  path: string,
  body?: unknown,
  options: { auth?: string | null; headers?: Record<string, string> } = {},
): void {
  const request: RecordedRequest = { method, path };
  if (options.auth !== undefined) request.auth = options.auth;
  if (options.headers) request.headers = options.headers;
  if (body !== undefined) request.json = body;
  raw(name, request);
}

const tool = (name: string, ws: string, toolName: string, args: unknown, auth?: string | null) =>
  call(name, 'POST', `/v1/workspaces/${ws}/tools/${toolName}`, args, { auth });
const bearer = (n: number) => `Bearer {{secret#${n}}}`;
const codex = (...lines: string[]) => ['*** Begin Patch', ...lines, '*** End Patch', ''].join('\n');
const sign = (body: string, secret = HOOK_SECRET) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
const mcp = (name: string, ws: string, message: unknown, auth?: string | null, query = '') =>
  raw(name, {
    method: 'POST',
    path: `/v1/workspaces/${ws}/mcp${query}`,
    ...(auth === undefined ? {} : { auth }),
    headers: MCP_HEADERS,
    body: JSON.stringify(message),
  });

// ---------------------------------------------------------------------------------------------
group('public');
call('health', 'GET', '/healthz', undefined, { auth: null });
call('openapi document', 'GET', '/openapi.json', undefined, { auth: null });
call('docs page', 'GET', '/docs', undefined, { auth: null });
call('unknown route outside /v1', 'GET', '/nope', undefined, { auth: null });
call('v1 without a key', 'GET', '/v1/tools', undefined, { auth: null });
call('v1 with an unknown key', 'GET', '/v1/tools', undefined, { auth: 'Bearer tg_not_a_key_of_this_server' });
call('v1 with Basic auth', 'GET', '/v1/tools', undefined, { auth: 'Basic dXNlcjpwYXNz' });

group('tool list');
call('default format', 'GET', '/v1/tools');
call('openai', 'GET', '/v1/tools?format=openai');
call('anthropic', 'GET', '/v1/tools?format=anthropic');
call('mcp', 'GET', '/v1/tools?format=mcp');
call('unknown format', 'GET', '/v1/tools?format=langchain');
call('workspace list route', 'GET', '/v1/workspaces');

// ---------------------------------------------------------------------------------------------
group('workspaces');
call('create alpha', 'PUT', '/v1/workspaces/alpha');
call('confirm alpha', 'PUT', '/v1/workspaces/alpha');
call('info alpha (empty)', 'GET', '/v1/workspaces/alpha');
call('create beta with an empty JSON body', 'PUT', '/v1/workspaces/beta', {});
call('create skills (the read-only root)', 'PUT', '/v1/workspaces/skills');
call('create excl with excludedPaths', 'PUT', '/v1/workspaces/excl', { excludedPaths: ['target', 'build/out'] });
call('id with a capital', 'PUT', '/v1/workspaces/Alpha');
call('id of 64 characters', 'PUT', `/v1/workspaces/a${'b'.repeat(63)}`);
call('settings with an unknown field', 'PUT', '/v1/workspaces/gamma', { excluded: ['x'] });
raw('malformed JSON settings', {
  method: 'PUT',
  path: '/v1/workspaces/gamma',
  headers: JSON_TYPE,
  body: '{"excludedPaths": [',
});
raw('settings sent as text/plain', {
  method: 'PUT',
  path: '/v1/workspaces/gamma',
  headers: { 'content-type': 'text/plain' },
  body: '{}',
});
raw('settings that are a JSON array', { method: 'PUT', path: '/v1/workspaces/gamma', headers: JSON_TYPE, body: '[]' });
call('info of a workspace never created', 'GET', '/v1/workspaces/never');
call('delete a workspace never created', 'DELETE', '/v1/workspaces/never');

// ---------------------------------------------------------------------------------------------
group('write_file');
tool('create src/a.txt', 'alpha', 'write_file', { path: 'src/a.txt', content: 'one\ntwo\nthree\nfour\nfive\n' });
tool('create dir/b.txt (non-ASCII)', 'alpha', 'write_file', { path: 'dir/b.txt', content: 'héllo wörld ✓\n' });
tool('create crlf.txt', 'alpha', 'write_file', { path: 'crlf.txt', content: 'a\r\nb\r\nc' });
tool('create empty.txt', 'alpha', 'write_file', { path: 'empty.txt', content: '' });
tool('create with NUL in the content', 'alpha', 'write_file', { path: 'nul.txt', content: 'a\u0000b\n' });
tool('mode create on an existing file', 'alpha', 'write_file', { path: 'src/a.txt', content: 'x', mode: 'create' });
tool('mode append', 'alpha', 'write_file', { path: 'log.txt', content: 'first\n', mode: 'append' });
tool('mode append again', 'alpha', 'write_file', { path: 'log.txt', content: 'second\n', mode: 'append' });
tool('expectedVersion that matches', 'alpha', 'write_file', {
  path: 'log.txt',
  content: 'replaced\n',
  expectedVersion: '7.{{ws#1}}',
});
tool('expectedVersion that is stale', 'alpha', 'write_file', {
  path: 'log.txt',
  content: 'late\n',
  expectedVersion: '7.{{ws#1}}',
});
tool('path ../x', 'alpha', 'write_file', { path: '../x', content: 'x' });
tool('path /etc/passwd', 'alpha', 'write_file', { path: '/etc/passwd', content: 'root::0:0::/:/bin/sh\n' });
tool('path with NUL', 'alpha', 'write_file', { path: 'a\u0000b.txt', content: 'x' });
tool('path with a backslash', 'alpha', 'write_file', { path: 'win\\dir\\c.txt', content: 'x' });
tool('empty path', 'alpha', 'write_file', { path: '', content: 'x' });
raw('path of 4097 bytes', {
  method: 'POST',
  path: '/v1/workspaces/alpha/tools/write_file',
  headers: JSON_TYPE,
  bodyRepeat: { prefix: '{"path": "', unit: 'p', count: 4097, suffix: '", "content": "x"}' },
});
tool('.ssh/authorized_keys', 'alpha', 'write_file', { path: '.ssh/authorized_keys', content: 'ssh-ed25519 AAAA' });
tool('.git/hooks/pre-commit', 'alpha', 'write_file', { path: '.git/hooks/pre-commit', content: '#!/bin/sh\n' });
tool('.GIT/Hooks in another case', 'alpha', 'write_file', { path: '.GIT/Hooks/post-checkout', content: '#!/bin/sh\n' });
tool('.github/workflows stays writable', 'alpha', 'write_file', {
  path: '.github/workflows/ci.yml',
  content: 'on: push\n',
});
tool('into the read-only root', 'alpha', 'write_file', { path: '.skills/new.md', content: 'x' });
tool('into an excluded path', 'excl', 'write_file', { path: 'target/x.txt', content: 'x' });
tool('beside an excluded path', 'excl', 'write_file', { path: 'targetx/a.txt', content: 'x' });
tool('parent is a file', 'alpha', 'write_file', { path: 'src/a.txt/inner.txt', content: 'x' });
raw('lone surrogate in the content', {
  method: 'POST',
  path: '/v1/workspaces/alpha/tools/write_file',
  headers: JSON_TYPE,
  body: '{"path": "s.txt", "content": "\\ud800"}',
});
raw('file over TOOLGATE_MAX_FILE_BYTES', {
  method: 'POST',
  path: '/v1/workspaces/alpha/tools/write_file',
  headers: JSON_TYPE,
  bodyRepeat: { prefix: '{"path": "big.txt", "content": "', unit: 'x', count: 20_000, suffix: '"}' },
});
tool('in a workspace never created', 'never', 'write_file', { path: 'a.txt', content: 'x' });
tool('skill file in the skills workspace', 'skills', 'write_file', { path: 'skill.md', content: '# A skill\n' });

// ---------------------------------------------------------------------------------------------
group('read_file');
tool('whole file', 'alpha', 'read_file', { path: 'src/a.txt' });
tool('startLine 2 endLine 3', 'alpha', 'read_file', { path: 'src/a.txt', startLine: 2, endLine: 3 });
tool('endLine before startLine', 'alpha', 'read_file', { path: 'src/a.txt', startLine: 3, endLine: 2 });
tool('startLine past the end', 'alpha', 'read_file', { path: 'src/a.txt', startLine: 50 });
tool('maxChars cut', 'alpha', 'read_file', { path: 'src/a.txt', maxChars: 6 });
tool('maxChars 0', 'alpha', 'read_file', { path: 'src/a.txt', maxChars: 0 });
tool('non-ASCII file', 'alpha', 'read_file', { path: 'dir/b.txt' });
tool('CRLF file keeps its line endings', 'alpha', 'read_file', { path: 'crlf.txt', startLine: 2 });
tool('empty file', 'alpha', 'read_file', { path: 'empty.txt' });
tool('file with a NUL byte', 'alpha', 'read_file', { path: 'nul.txt' });
tool('missing file', 'alpha', 'read_file', { path: 'missing.txt' });
tool('a directory', 'alpha', 'read_file', { path: 'src' });
tool('path ./src//a.txt', 'alpha', 'read_file', { path: './src//a.txt' });
tool('path ../x', 'alpha', 'read_file', { path: '../x' });
tool('path /etc/passwd', 'alpha', 'read_file', { path: '/etc/passwd' });
tool('path with NUL', 'alpha', 'read_file', { path: 'src/a.txt\u0000' });
tool('path with a backslash', 'alpha', 'read_file', { path: 'src\\a.txt' });
tool('through the read-only root', 'alpha', 'read_file', { path: '.skills/skill.md' });

// ---------------------------------------------------------------------------------------------
group('files');
call('root', 'GET', '/v1/workspaces/alpha/files');
call('prefix dir', 'GET', '/v1/workspaces/alpha/files?prefix=src');
call('prefix that is a file', 'GET', '/v1/workspaces/alpha/files?prefix=src/a.txt');
call('prefix that is missing', 'GET', '/v1/workspaces/alpha/files?prefix=nope');
call('recursive=yes', 'GET', '/v1/workspaces/alpha/files?recursive=yes');
call('info alpha after writes', 'GET', '/v1/workspaces/alpha');

// ---------------------------------------------------------------------------------------------
group('apply_patch');
tool('codex: add a file', 'alpha', 'apply_patch', {
  patch: codex('*** Add File: p/new.txt', '+alpha', '+beta', '+gamma'),
});
tool('codex: update a file', 'alpha', 'apply_patch', {
  patch: codex('*** Update File: p/new.txt', '@@', ' alpha', '-beta', '+BETA', ' gamma'),
});
tool('codex: dry run', 'alpha', 'apply_patch', {
  patch: codex('*** Update File: p/new.txt', '@@', '-alpha', '+ALPHA'),
  dryRun: true,
});
tool('codex: update and move', 'alpha', 'apply_patch', {
  patch: codex('*** Update File: p/new.txt', '*** Move to: p/moved.txt', '@@', ' alpha', '-BETA', '+beta2'),
});
tool('codex: add, update and delete at once', 'alpha', 'apply_patch', {
  patch: codex(
    '*** Add File: p/second.txt',
    '+2nd',
    '*** Update File: src/a.txt',
    '@@ two',
    ' three',
    '-four',
    '+FOUR',
    '*** Delete File: p/moved.txt',
  ),
});
tool('codex: context not found', 'alpha', 'apply_patch', {
  patch: codex('*** Update File: src/a.txt', '@@', ' one', '-nine', '+NINE'),
});
tool('codex: update a missing file', 'alpha', 'apply_patch', {
  patch: codex('*** Update File: nowhere.txt', '@@', '-a', '+b'),
});
tool('codex: no End Patch', 'alpha', 'apply_patch', { patch: '*** Begin Patch\n*** Add File: x.txt\n+x\n' });
tool('codex: unknown operation', 'alpha', 'apply_patch', { patch: codex('*** Rename File: a b') });
tool('codex: one file in two operations', 'alpha', 'apply_patch', {
  patch: codex('*** Add File: twice.txt', '+a', '*** Delete File: twice.txt'),
});
tool('codex: second operation fails, first not applied', 'alpha', 'apply_patch', {
  patch: codex('*** Add File: first.txt', '+a', '*** Update File: src/a.txt', '@@', '-absent', '+x'),
});
tool('codex: path ../x', 'alpha', 'apply_patch', { patch: codex('*** Add File: ../x.txt', '+x') });
tool('codex: path /etc/passwd', 'alpha', 'apply_patch', {
  patch: codex('*** Update File: /etc/passwd', '@@', '-root', '+toor'),
});
tool('codex: .ssh path', 'alpha', 'apply_patch', { patch: codex('*** Add File: .ssh/config', '+Host *') });
tool('codex: a directory', 'alpha', 'apply_patch', { patch: codex('*** Update File: src', '@@', '-a', '+b') });
tool('codex: CRLF file keeps its endings', 'alpha', 'apply_patch', {
  patch: codex('*** Update File: crlf.txt', '@@', ' a', '-b', '+B'),
});
tool('read crlf.txt after the patch', 'alpha', 'read_file', { path: 'crlf.txt' });
tool('unified: update', 'alpha', 'apply_patch', {
  patch: ['--- a/src/a.txt', '+++ b/src/a.txt', '@@ -1,3 +1,3 @@', ' one', '-two', '+TWO', ' three', ''].join('\n'),
});
tool('unified: new file', 'alpha', 'apply_patch', {
  patch: [
    'diff --git a/u/new.txt b/u/new.txt',
    'new file mode 100644',
    '--- /dev/null',
    '+++ b/u/new.txt',
    '@@ -0,0 +1,2 @@',
    '+u1',
    '+u2',
    '',
  ].join('\n'),
});
tool('unified: delete', 'alpha', 'apply_patch', {
  patch: [
    'diff --git a/u/new.txt b/u/new.txt',
    'deleted file mode 100644',
    '--- a/u/new.txt',
    '+++ /dev/null',
    '@@ -1,2 +0,0 @@',
    '-u1',
    '-u2',
    '',
  ].join('\n'),
});
tool('unified: hunk that does not apply', 'alpha', 'apply_patch', {
  patch: ['--- a/src/a.txt', '+++ b/src/a.txt', '@@ -1,2 +1,2 @@', ' one', '-zwei', '+ZWEI', ''].join('\n'),
});
tool('unified: overlapping hunks', 'alpha', 'apply_patch', {
  patch: [
    '--- a/src/a.txt',
    '+++ b/src/a.txt',
    '@@ -1,2 +1,2 @@',
    ' one',
    '-TWO',
    '+2',
    '@@ -2,2 +2,2 @@',
    '-TWO',
    '+II',
    ' three',
    '',
  ].join('\n'),
});
tool('unified: binary patch', 'alpha', 'apply_patch', {
  patch: [
    'diff --git a/bin.dat b/bin.dat',
    'new file mode 100644',
    'GIT binary patch',
    'literal 2',
    'JcmZ?d00001',
    '',
    'literal 0',
    'HcmV?d00001',
    '',
  ].join('\n'),
});
tool('neither form', 'alpha', 'apply_patch', { patch: 'just some text\n' });
tool('codex: add an existing file (it is replaced)', 'alpha', 'apply_patch', {
  patch: codex('*** Add File: src/a.txt', '+x'),
});
tool('read src/a.txt after the patches', 'alpha', 'read_file', { path: 'src/a.txt' });
call('files recursive after the patches', 'GET', '/v1/workspaces/alpha/files?recursive=true');

// ---------------------------------------------------------------------------------------------
group('tool route');
tool('unknown tool', 'alpha', 'web_search', { query: 'x' });
raw('empty body', { method: 'POST', path: '/v1/workspaces/alpha/tools/read_file', headers: JSON_TYPE, body: '' });
raw('malformed JSON', {
  method: 'POST',
  path: '/v1/workspaces/alpha/tools/read_file',
  headers: JSON_TYPE,
  body: '{"path": "src/a.txt",}',
});
raw('text/plain body', {
  method: 'POST',
  path: '/v1/workspaces/alpha/tools/read_file',
  headers: { 'content-type': 'text/plain' },
  body: '{"path": "src/a.txt"}',
});
raw('application/vnd+json body', {
  method: 'POST',
  path: '/v1/workspaces/alpha/tools/read_file',
  headers: { 'content-type': 'application/vnd.toolgate+json; charset=utf-8' },
  body: '{"path": "src/a.txt"}',
});
raw('body not UTF-8', {
  method: 'POST',
  path: '/v1/workspaces/alpha/tools/read_file',
  headers: JSON_TYPE,
  bodyBase64: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]).toString('base64'),
});
raw('body a JSON array', {
  method: 'POST',
  path: '/v1/workspaces/alpha/tools/read_file',
  headers: JSON_TYPE,
  body: '["src/a.txt"]',
});
raw('body over TOOLGATE_MAX_BODY_BYTES', {
  method: 'POST',
  path: '/v1/workspaces/alpha/tools/write_file',
  headers: JSON_TYPE,
  bodyRepeat: { prefix: '{"path": "huge.txt", "content": "', unit: 'x', count: 70_000, suffix: '"}' },
});
tool('waitMs not a number', 'alpha', 'read_file?waitMs=soon', { path: 'src/a.txt' });

// ---------------------------------------------------------------------------------------------
group('bash refusals');
tool('no action', 'alpha', 'bash', { command: 'ls' });
tool('exec without a command', 'alpha', 'bash', { action: 'exec' });
tool('exec with tty', 'alpha', 'bash', { action: 'exec', command: 'ls', tty: true });
tool('exec with cwd ../', 'alpha', 'bash', { action: 'exec', command: 'ls', cwd: '../' });
tool('status of an unknown process', 'alpha', 'bash', { action: 'status', processId: 'proc_unknown' });
tool('list with no processes', 'alpha', 'bash', { action: 'list' });

// ---------------------------------------------------------------------------------------------
group('keys');
call('create agent#1: alpha, auto, read_file and write_file', 'POST', '/v1/keys', {
  name: 'agent one',
  role: 'agent',
  workspaces: ['alpha'],
  approvalMode: 'auto',
  tools: ['read_file', 'write_file'],
});
call('create agent#2: alpha, default (safe)', 'POST', '/v1/keys', {
  name: 'agent two',
  role: 'agent',
  workspaces: ['alpha'],
});
call('create approver#3: alpha', 'POST', '/v1/keys', { name: 'approver', role: 'approver', workspaces: ['alpha'] });
call('create agent#4: alpha, manual, with rules', 'POST', '/v1/keys', {
  name: 'manual agent',
  role: 'agent',
  workspaces: ['alpha'],
  approvalMode: 'manual',
  rules: [
    { tool: 'apply_patch', decision: 'deny' },
    { tool: 'bash', action: 'list', decision: 'allow' },
  ],
});
call('create admin#5: alpha and beta', 'POST', '/v1/keys', {
  name: 'scoped admin',
  role: 'admin',
  workspaces: ['alpha', 'beta'],
});
call('create runner#6', 'POST', '/v1/keys', { name: 'runner', role: 'runner', workspaces: ['*'] });
call('create agent#7 with notifyUrl (never used for calls)', 'POST', '/v1/keys', {
  name: 'notified',
  role: 'agent',
  workspaces: ['beta'],
  notifyUrl: 'https://notify.invalid/toolgate',
});
call('create agent#8 with quota and rate limit', 'POST', '/v1/keys', {
  name: 'limited',
  role: 'agent',
  workspaces: ['beta'],
  approvalMode: 'auto',
  quota: { calls: 2, period: 'day' },
  rateLimitPerMinute: 3,
});
call('create admin#9: bin only (runs the one exec)', 'POST', '/v1/keys', {
  name: 'bin maker',
  role: 'admin',
  workspaces: ['bin'],
});
call('unknown role', 'POST', '/v1/keys', { name: 'x', role: 'root', workspaces: ['*'] });
call('tool name typo', 'POST', '/v1/keys', { name: 'x', role: 'agent', workspaces: ['*'], tools: ['read_fiel'] });
call('rule for an unknown tool', 'POST', '/v1/keys', {
  name: 'x',
  role: 'agent',
  workspaces: ['*'],
  rules: [{ tool: 'web_search', decision: 'allow' }],
});
call('no name', 'POST', '/v1/keys', { role: 'agent', workspaces: ['*'] });
call('bad workspace id', 'POST', '/v1/keys', { name: 'x', role: 'agent', workspaces: ['Not An Id'] });
call('quota without calls or seconds', 'POST', '/v1/keys', {
  name: 'x',
  role: 'agent',
  workspaces: ['*'],
  quota: { period: 'day' },
});
call('list (agent#1 sees itself)', 'GET', '/v1/keys', undefined, { auth: bearer(1) });
call('list (scoped admin#5)', 'GET', '/v1/keys', undefined, { auth: bearer(5) });
call(
  'agent#1 creates a key',
  'POST',
  '/v1/keys',
  { name: 'x', role: 'agent', workspaces: ['alpha'] },
  { auth: bearer(1) },
);
call(
  'scoped admin#5 creates a key for *',
  'POST',
  '/v1/keys',
  { name: 'x', role: 'agent', workspaces: ['*'] },
  { auth: bearer(5) },
);
call(
  'scoped admin#5 creates agent#10 for beta',
  'POST',
  '/v1/keys',
  { name: 'beta agent', role: 'agent', workspaces: ['beta'], approvalMode: 'auto' },
  { auth: bearer(5) },
);
call('scoped admin#5 revokes the runner key (outside its scope)', 'DELETE', '/v1/keys/{{key#6}}', undefined, {
  auth: bearer(5),
});
call('agent#1 revokes a key', 'DELETE', '/v1/keys/{{key#2}}', undefined, { auth: bearer(1) });
call('revoke the bootstrap admin key', 'DELETE', '/v1/keys/key_bootstrap_admin');
call('revoke the in-process runner key', 'DELETE', '/v1/keys/key_bootstrap_runner');
call('scoped admin#5 revokes agent#10', 'DELETE', '/v1/keys/{{key#10}}', undefined, { auth: bearer(5) });
call('revoke agent#10 again', 'DELETE', '/v1/keys/{{key#10}}');
call('revoked agent#10 calls', 'GET', '/v1/keys', undefined, { auth: bearer(10) });
call('revoke an unknown key', 'DELETE', '/v1/keys/key_unknown');

group('scope');
tool('agent#1 reads alpha', 'alpha', 'read_file', { path: 'src/a.txt' }, bearer(1));
tool('agent#1 writes alpha', 'alpha', 'write_file', { path: 'agent1.txt', content: 'by agent one\n' }, bearer(1));
tool('agent#1 reads beta (out of scope)', 'beta', 'read_file', { path: 'a.txt' }, bearer(1));
call('agent#1 creates beta', 'PUT', '/v1/workspaces/beta', undefined, { auth: bearer(1) });
tool(
  'agent#1 calls apply_patch (not in its tools)',
  'alpha',
  'apply_patch',
  { patch: codex('*** Add File: z.txt', '+z') },
  bearer(1),
);
tool('agent#1 calls bash exec (not in its tools)', 'alpha', 'bash', { action: 'exec', command: 'ls' }, bearer(1));
call('agent#1 confirms alpha', 'PUT', '/v1/workspaces/alpha', undefined, { auth: bearer(1) });
call(
  'agent#1 changes the settings of alpha',
  'PUT',
  '/v1/workspaces/alpha',
  { excludedPaths: ['secret'] },
  { auth: bearer(1) },
);
call('agent#1 deletes alpha', 'DELETE', '/v1/workspaces/alpha', undefined, { auth: bearer(1) });
call('runner#6 reads a workspace', 'GET', '/v1/workspaces/alpha', undefined, { auth: bearer(6) });
call('runner#6 lists keys', 'GET', '/v1/keys', undefined, { auth: bearer(6) });
call('runner#6 lists usage', 'GET', '/v1/usage', undefined, { auth: bearer(6) });
call('agent#1 on a runner route', 'POST', '/v1/runner/lease', {}, { auth: bearer(1) });

// ---------------------------------------------------------------------------------------------
group('binary file');
call('create bin', 'PUT', '/v1/workspaces/bin', undefined, { auth: bearer(9) });
// The one exec of the recording: its durationMs is normalised, and it runs under admin#9 (only
// workspace bin) so no usage total read below counts it (its bytes out follow durationMs's digits).
tool(
  'exec writes a non-UTF-8 file',
  'bin',
  'bash',
  { action: 'exec', command: "printf 'ok\\n'; printf '\\377\\376\\000x' > bin.dat" },
  bearer(9),
);
tool('read_file on it', 'bin', 'read_file', { path: 'bin.dat' }, bearer(9));
tool(
  'apply_patch on it',
  'bin',
  'apply_patch',
  { patch: codex('*** Update File: bin.dat', '@@', '-x', '+y') },
  bearer(9),
);
call('files of bin', 'GET', '/v1/workspaces/bin/files', undefined, { auth: bearer(9) });

// ---------------------------------------------------------------------------------------------
group('approvals');
tool('agent#2 (safe) writes: waits', 'alpha', 'write_file', { path: 'approved.txt', content: 'approved\n' }, bearer(2));
tool('agent#2 (safe) reads: runs', 'alpha', 'read_file', { path: 'src/a.txt', endLine: 1 }, bearer(2));
tool(
  'agent#2 (safe) patches with waitMs=0: waits',
  'alpha',
  'apply_patch?waitMs=0',
  { patch: codex('*** Add File: rejected.txt', '+no') },
  bearer(2),
);
tool(
  'agent#2 with invalid arguments: refused before any approval',
  'alpha',
  'write_file',
  { path: 'x.txt' },
  bearer(2),
);
tool('agent#4 (manual) reads: waits', 'alpha', 'read_file', { path: 'src/a.txt' }, bearer(4));
tool('agent#4 rule deny apply_patch', 'alpha', 'apply_patch', { patch: codex('*** Add File: d.txt', '+d') }, bearer(4));
tool('agent#4 rule allow bash list', 'alpha', 'bash', { action: 'list' }, bearer(4));
call('list (admin)', 'GET', '/v1/approvals');
call('list pending, limit 2', 'GET', '/v1/approvals?status=pending&limit=2');
call('list (agent#2: its own)', 'GET', '/v1/approvals', undefined, { auth: bearer(2) });
call('list with a bad status', 'GET', '/v1/approvals?status=waiting');
call('get apr#1', 'GET', '/v1/approvals/{{apr#1}}', undefined, { auth: bearer(3) });
call('agent#2 decides', 'POST', '/v1/approvals/{{apr#1}}/decision', { decision: 'approve' }, { auth: bearer(2) });
call(
  'decision of the wrong shape',
  'POST',
  '/v1/approvals/{{apr#1}}/decision',
  { decision: 'yes' },
  { auth: bearer(3) },
);
call(
  'approver#3 approves apr#1',
  'POST',
  '/v1/approvals/{{apr#1}}/decision',
  { decision: 'approve' },
  { auth: bearer(3) },
);
call(
  'approver#3 approves apr#1 again',
  'POST',
  '/v1/approvals/{{apr#1}}/decision',
  { decision: 'reject' },
  { auth: bearer(3) },
);
tool('the approved write landed', 'alpha', 'read_file', { path: 'approved.txt' });
call(
  'approver#3 rejects apr#2 with a reason',
  'POST',
  '/v1/approvals/{{apr#2}}/decision',
  { decision: 'reject', reason: 'not this file' },
  { auth: bearer(3) },
);
call('admin rejects apr#3', 'POST', '/v1/approvals/{{apr#3}}/decision', { decision: 'reject' });
call('decide an unknown approval', 'POST', '/v1/approvals/apr_unknown/decision', { decision: 'approve' });
call('list rejected', 'GET', '/v1/approvals?status=rejected');
tool('the rejected patch did not land', 'alpha', 'read_file', { path: 'rejected.txt' });

// ---------------------------------------------------------------------------------------------
group('mcp');
mcp('initialize', 'alpha', {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'recorder', version: '1.0.0' } },
});
mcp('notifications/initialized', 'alpha', { jsonrpc: '2.0', method: 'notifications/initialized' });
mcp('tools/list', 'alpha', { jsonrpc: '2.0', id: 3, method: 'tools/list' });
mcp('tools/call read_file', 'alpha', {
  jsonrpc: '2.0',
  id: 4,
  method: 'tools/call',
  params: { name: 'read_file', arguments: { path: 'src/a.txt', endLine: 2 } },
});
mcp('tools/call write_file', 'alpha', {
  jsonrpc: '2.0',
  id: 5,
  method: 'tools/call',
  params: { name: 'write_file', arguments: { path: 'mcp.txt', content: 'via mcp\n' } },
});
mcp('tools/call path outside', 'alpha', {
  jsonrpc: '2.0',
  id: 6,
  method: 'tools/call',
  params: { name: 'read_file', arguments: { path: '../etc/passwd' } },
});
mcp('tools/call unknown tool', 'alpha', {
  jsonrpc: '2.0',
  id: 8,
  method: 'tools/call',
  params: { name: 'web_search', arguments: {} },
});
mcp('tools/call bad arguments', 'alpha', {
  jsonrpc: '2.0',
  id: 9,
  method: 'tools/call',
  params: { name: 'read_file', arguments: { path: 1 } },
});
mcp(
  'tools/call needing approval (agent#2)',
  'alpha',
  {
    jsonrpc: '2.0',
    id: 10,
    method: 'tools/call',
    params: { name: 'write_file', arguments: { path: 'mcp-wait.txt', content: 'x' } },
  },
  bearer(2),
);
mcp(
  'tools/call of a tool outside the allowlist (agent#1)',
  'alpha',
  { jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'apply_patch', arguments: { patch: '' } } },
  bearer(1),
);
mcp('unknown method', 'alpha', { jsonrpc: '2.0', id: 12, method: 'resources/list' });
mcp('workspace out of scope (agent#1 on beta)', 'beta', { jsonrpc: '2.0', id: 13, method: 'tools/list' }, bearer(1));
mcp('runner key', 'alpha', { jsonrpc: '2.0', id: 14, method: 'tools/list' }, bearer(6));
mcp('no key', 'alpha', { jsonrpc: '2.0', id: 15, method: 'tools/list' }, null);
raw('parse error', {
  method: 'POST',
  path: '/v1/workspaces/alpha/mcp',
  headers: MCP_HEADERS,
  body: '{"jsonrpc": "2.0",',
});
raw('without Accept', {
  method: 'POST',
  path: '/v1/workspaces/alpha/mcp',
  headers: JSON_TYPE,
  body: JSON.stringify({ jsonrpc: '2.0', id: 17, method: 'tools/list' }),
});
raw('GET', { method: 'GET', path: '/v1/workspaces/alpha/mcp', headers: { accept: 'text/event-stream' } });

// ---------------------------------------------------------------------------------------------
group('history');
call('checkpoint alpha with a message', 'POST', '/v1/workspaces/alpha/checkpoints', { message: 'first checkpoint' });
tool('change a file after it', 'alpha', 'write_file', { path: 'dir/b.txt', content: 'changed\n' });
tool('add a file after it', 'alpha', 'write_file', { path: 'after.txt', content: 'after\n' });
call('diff from commit#1', 'GET', '/v1/workspaces/alpha/diff?from={{commit#1}}');
call('diff without from', 'GET', '/v1/workspaces/alpha/diff');
call('diff from a bad id', 'GET', '/v1/workspaces/alpha/diff?from=HEAD');
call('diff from an unknown commit', 'GET', '/v1/workspaces/alpha/diff?from=0000000000000000000000000000000000000000');
call('checkpoint with no body (default message)', 'POST', '/v1/workspaces/alpha/checkpoints');
call('list checkpoints', 'GET', '/v1/workspaces/alpha/checkpoints');
call('list checkpoints limit 1', 'GET', '/v1/workspaces/alpha/checkpoints?limit=1');
call(
  'restore by agent#2 (safe): forbidden',
  'POST',
  '/v1/workspaces/alpha/restore',
  { checkpoint: '{{commit#1}}' },
  { auth: bearer(2) },
);
call('restore commit#1', 'POST', '/v1/workspaces/alpha/restore', { checkpoint: '{{commit#1}}' });
call('restore commit#1 again (nothing to do)', 'POST', '/v1/workspaces/alpha/restore', { checkpoint: '{{commit#1}}' });
call('diff after the restore', 'GET', '/v1/workspaces/alpha/diff?from={{commit#1}}');
call('diff in beta from an alpha checkpoint', 'GET', '/v1/workspaces/beta/diff?from={{commit#1}}');
call('import into a non-empty workspace', 'POST', '/v1/workspaces/alpha/import', {
  git: { url: 'https://example.invalid/repo.git' },
});
call('import from loopback (egress refused)', 'POST', '/v1/workspaces/beta/import', {
  git: { url: 'http://127.0.0.1:9/repo.git' },
});
call('import from localhost by name (egress refused)', 'POST', '/v1/workspaces/beta/import', {
  git: { url: 'http://user:token@localhost/repo.git', ref: 'main' },
});
call('import from an ftp URL', 'POST', '/v1/workspaces/beta/import', {
  git: { url: 'ftp://example.invalid/repo.git' },
});
call('turn autoCheckpoint on for beta', 'PUT', '/v1/workspaces/beta', { autoCheckpoint: true });
tool('patch beta (auto checkpoint)', 'beta', 'apply_patch', { patch: codex('*** Add File: auto.txt', '+auto') });
tool('dry-run patch beta (no checkpoint)', 'beta', 'apply_patch', {
  patch: codex('*** Add File: dry.txt', '+dry'),
  dryRun: true,
});
call('checkpoints of beta after the patch', 'GET', '/v1/workspaces/beta/checkpoints');

// ---------------------------------------------------------------------------------------------
group('hooks');
const delivery = JSON.stringify({
  patch: codex('*** Add File: from-hook.txt', '+hello from a hook'),
  commitMessage: 'hook: add from-hook.txt',
});
const secondDelivery = JSON.stringify({
  patch: codex('*** Update File: from-hook.txt', '@@', '-hello from a hook', '+hello again'),
});
call('configure ci', 'PUT', '/v1/hooks/ci', { secret: HOOK_SECRET, workspace: 'alpha' });
call('configure ci again with checkpoints', 'PUT', '/v1/hooks/ci', {
  secret: HOOK_SECRET,
  workspace: 'alpha',
  checkpoint: true,
});
call('configure with a short secret', 'PUT', '/v1/hooks/short', { secret: 'short', workspace: 'alpha' });
call('configure by agent#1', 'PUT', '/v1/hooks/mine', { secret: HOOK_SECRET, workspace: 'alpha' }, { auth: bearer(1) });
call(
  'configure by admin#5 for a workspace outside it',
  'PUT',
  '/v1/hooks/other',
  { secret: HOOK_SECRET, workspace: 'excl' },
  { auth: bearer(5) },
);
call('get ci', 'GET', '/v1/hooks/ci');
call('list', 'GET', '/v1/hooks');
raw('deliver', {
  method: 'POST',
  path: '/v1/hooks/ci',
  auth: null,
  headers: { ...JSON_TYPE, 'x-hub-signature-256': sign(delivery), 'x-delivery-id': 'delivery-1' },
  body: delivery,
});
raw('deliver the same delivery id again', {
  method: 'POST',
  path: '/v1/hooks/ci',
  auth: null,
  headers: { ...JSON_TYPE, 'x-hub-signature-256': sign(delivery), 'x-delivery-id': 'delivery-1' },
  body: delivery,
});
raw('deliver the same patch under a new delivery id (Add File replaces)', {
  method: 'POST',
  path: '/v1/hooks/ci',
  auth: null,
  headers: { ...JSON_TYPE, 'x-toolgate-signature-256': sign(delivery), 'x-github-delivery': 'delivery-2' },
  body: delivery,
});
raw('deliver an update', {
  method: 'POST',
  path: '/v1/hooks/ci',
  auth: null,
  headers: { ...JSON_TYPE, 'x-hub-signature-256': sign(secondDelivery) },
  body: secondDelivery,
});
raw('deliver with a wrong signature', {
  method: 'POST',
  path: '/v1/hooks/ci',
  auth: null,
  headers: { ...JSON_TYPE, 'x-hub-signature-256': sign(delivery, 'another secret of enough length') },
  body: delivery,
});
raw('deliver without a signature', {
  method: 'POST',
  path: '/v1/hooks/ci',
  auth: null,
  headers: JSON_TYPE,
  body: delivery,
});
raw('deliver to an unknown hook', {
  method: 'POST',
  path: '/v1/hooks/nope',
  auth: null,
  headers: { ...JSON_TYPE, 'x-hub-signature-256': sign(delivery) },
  body: delivery,
});
raw('deliver signed text that is not JSON', {
  method: 'POST',
  path: '/v1/hooks/ci',
  auth: null,
  headers: { ...JSON_TYPE, 'x-hub-signature-256': sign('not json') },
  body: 'not json',
});
raw('deliver with a bad delivery id', {
  method: 'POST',
  path: '/v1/hooks/ci',
  auth: null,
  headers: { ...JSON_TYPE, 'x-hub-signature-256': sign(delivery), 'x-delivery-id': 'has space' },
  body: delivery,
});
tool('the delivered file', 'alpha', 'read_file', { path: 'from-hook.txt' });
call('checkpoints after the deliveries', 'GET', '/v1/workspaces/alpha/checkpoints?limit=2');
call('delete ci', 'DELETE', '/v1/hooks/ci');
raw('deliver to the deleted hook', {
  method: 'POST',
  path: '/v1/hooks/ci',
  auth: null,
  headers: { ...JSON_TYPE, 'x-hub-signature-256': sign(secondDelivery) },
  body: secondDelivery,
});

// ---------------------------------------------------------------------------------------------
group('quota and rate limit');
tool('agent#8 call 1', 'beta', 'read_file', { path: 'auto.txt' }, bearer(8));
tool('agent#8 call 2', 'beta', 'read_file', { path: 'missing.txt' }, bearer(8));
tool('agent#8 call 3: quota spent', 'beta', 'read_file', { path: 'auto.txt' }, bearer(8));
tool('agent#8 call 4: rate limited', 'beta', 'read_file', { path: 'auto.txt' }, bearer(8));

// ---------------------------------------------------------------------------------------------
group('usage');
call('agent#1 own usage', 'GET', '/v1/usage', undefined, { auth: bearer(1) });
call('agent#8 own usage by workspace', 'GET', '/v1/usage?groupBy=workspace', undefined, { auth: bearer(8) });
call("agent#1 reads agent#2's usage", 'GET', '/v1/usage?keyId={{key#2}}', undefined, { auth: bearer(1) });
call('admin#5 by tool', 'GET', '/v1/usage?groupBy=tool', undefined, { auth: bearer(5) });
call('admin#5 by workspace', 'GET', '/v1/usage?groupBy=workspace', undefined, { auth: bearer(5) });
// groupBy=key rows are ordered by key id, and ids are random: only one-row answers are recorded.
call('admin#5 by key, agent#1 only', 'GET', '/v1/usage?groupBy=key&keyId={{key#1}}', undefined, { auth: bearer(5) });
call('bootstrap admin, its own calls by tool', 'GET', '/v1/usage?groupBy=tool&keyId=key_bootstrap_admin');
call('a window in 2001', 'GET', '/v1/usage?from=2001-01-01T00:00:00Z&to=978393600000');
call('groupBy unknown', 'GET', '/v1/usage?groupBy=day');
call('from after to', 'GET', '/v1/usage?from=2001-01-02T00:00:00Z&to=2001-01-01T00:00:00Z');

// ---------------------------------------------------------------------------------------------
group('delete workspace');
call('admin#5 deletes excl (out of scope)', 'DELETE', '/v1/workspaces/excl', undefined, { auth: bearer(5) });
call('delete excl', 'DELETE', '/v1/workspaces/excl');
call('info of deleted excl', 'GET', '/v1/workspaces/excl');
call('create excl again', 'PUT', '/v1/workspaces/excl');
tool('write into the new excl (a new incarnation)', 'excl', 'write_file', {
  path: 'target/x.txt',
  content: 'no longer excluded\n',
});
call('files of the new excl', 'GET', '/v1/workspaces/excl/files?recursive=true');
call('keys at the end', 'GET', '/v1/keys');

export const recordedCalls: readonly CallSpec[] = calls;
