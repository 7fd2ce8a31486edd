// docs/api.md "Files a command leaves", over real HTTP with real runners and bubblewrap: a file of up to
// TOOLGATE_MAX_FILE_BYTES syncs back whatever the body limit (its content uploaded in pieces before
// the sync), a larger one is named in conflicts and stops no later sync, and the upload routes
// refuse what they must and store nothing then.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunnerKey, type TestKey } from '../support/keys.ts';
import { startRunner, type RunnerProcess } from '../support/runner-process.ts';
import { makeDataDir, removeDir, useServer, type ApiAnswer } from '../support/server-process.ts';
import { JOB_WAIT_MS } from '../support/runner-sync.ts';

const MiB = 1024 * 1024;
/** Default limits, runners started by the tests. */
const server = useServer({ env: { TOOLGATE_RUNNER: 'off' } });
/** A low file limit, the home's own runner. */
const limited = useServer({ env: { TOOLGATE_MAX_FILE_BYTES: String(MiB) } });

const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');
const runners: { runner: RunnerProcess; dataDir: string }[] = [];

async function runnerFor(key: TestKey): Promise<RunnerProcess> {
  const dataDir = makeDataDir();
  const runner = await startRunner(server.url, key.secret, dataDir);
  runners.push({ runner, dataDir });
  return runner;
}

afterAll(async () => {
  for (const { runner, dataDir } of runners) {
    await runner.kill('SIGKILL');
    removeDir(dataDir);
  }
});

describe('a file a command leaves', () => {
  it('of 12,000,000 bytes, over the request body limit, syncs back byte for byte', async () => {
    await server.call('PUT', '/v1/workspaces/big');
    const key = await createRunnerKey(server, ['big']);
    const first = await runnerFor(key);
    const made = await server.call('POST', '/v1/workspaces/big/tools/bash', {
      action: 'exec',
      command: 'head -c 12000000 /dev/urandom > big.txt && sha256sum big.txt',
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(made.body.result).toMatchObject({ exitCode: 0 });
    expect(made.body.result.conflicts).toBeUndefined();
    expect(made.body.result.error).toBeUndefined();
    const files = await server.call('GET', '/v1/workspaces/big/files?recursive=true');
    expect(files.body.entries).toContainEqual(expect.objectContaining({ path: 'big.txt', size: 12_000_000 }));
    // A runner with an empty copy reads the file back from the server, not from the first runner's disk.
    await first.kill('SIGKILL');
    await runnerFor(key);
    // Under wrangler dev the killed runner's waiting lease request may still be handed the job, which
    // then goes to the new runner once that lease runs out: the exec waits long enough for that.
    const read = await server.call('POST', '/v1/workspaces/big/tools/bash', {
      action: 'exec',
      command: 'sha256sum big.txt',
      timeoutMs: 80_000,
    });
    expect(read.body.result).toMatchObject({ exitCode: 0, stdout: made.body.result.stdout });
  });

  it('over TOOLGATE_MAX_FILE_BYTES is not kept, is named in conflicts, and the rest and later commands sync', async () => {
    await limited.call('PUT', '/v1/workspaces/capped');
    const bash = (command: string) =>
      limited.call('POST', '/v1/workspaces/capped/tools/bash', { action: 'exec', command });
    const over = await bash(
      'head -c 2000000 /dev/urandom > big.bin && head -c 900000 /dev/zero | tr "\\0" x > under.txt && echo kept > small.txt',
    );
    expect(over.status, JSON.stringify(over.body)).toBe(200);
    expect(over.body.result).toMatchObject({ exitCode: 0, conflicts: ['big.bin'] });
    expect(over.body.result.error).toContain('TOOLGATE_MAX_FILE_BYTES');
    const read = (path: string) =>
      limited.call('POST', '/v1/workspaces/capped/tools/read_file', { path, maxChars: MiB });
    expect((await read('small.txt')).body.result.content).toBe('kept\n');
    expect((await read('under.txt')).body.result.content).toBe('x'.repeat(900_000));
    expect((await read('big.bin')).status).toBe(404);
    const next = await bash('echo next > next.txt && ls');
    expect(next.body.result).toMatchObject({ exitCode: 0, stdout: 'next.txt\nsmall.txt\nunder.txt\n' });
    expect(next.body.result.conflicts).toBeUndefined();
    expect((await read('next.txt')).body.result.content).toBe('next\n');
  });
});

describe('PUT and POST /v1/runner/workspaces/{ws}/processes/{id}/blobs', () => {
  let holder: TestKey;
  let job: { processId: string; token: number };
  const ws = 'uploads';
  const base = () => `/v1/runner/workspaces/${ws}/processes/${job.processId}`;

  beforeAll(async () => {
    await server.call('PUT', `/v1/workspaces/${ws}`);
    holder = await createRunnerKey(server, [ws]);
    await server.call('POST', `/v1/workspaces/${ws}/tools/bash`, { action: 'start', command: 'true' });
    job = (await holder.call('POST', '/v1/runner/lease', { runnerId: 'by-hand', waitMs: JOB_WAIT_MS })).body.job;
  });

  const send = async (
    key: TestKey,
    method: string,
    path: string,
    body: Uint8Array | string,
    type = 'application/octet-stream',
  ): Promise<ApiAnswer> => {
    const response = await fetch(server.url + path, {
      method,
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': type },
      body,
    });
    return { status: response.status, headers: response.headers, body: await response.json() };
  };
  const piece = (
    hash: string,
    size: number,
    offset: number,
    bytes: Uint8Array | string,
    token = job.token,
    key = holder,
  ) => send(key, 'PUT', `${base()}/blobs/${hash}?token=${token}&offset=${offset}&size=${size}`, bytes);
  const sync = (changes: unknown[]) => holder.call('POST', `${base()}/sync`, { token: job.token, changes });
  const read = (path: string) => server.call('POST', `/v1/workspaces/${ws}/tools/read_file`, { path });
  const frames = (...blobs: string[]) =>
    Buffer.concat(
      blobs.flatMap((text) => [
        Buffer.from(sha256(text)),
        Buffer.from([0, 0, 0, 0, 0, 0, 0, 0].map((_, i) => (i === 7 ? text.length : 0))),
        Buffer.from(text),
      ]),
    );

  it('takes a blob in pieces, in order, a repeated piece changing nothing, and a sync names it', async () => {
    const content = 'a line of the file\n'.repeat(160);
    const hash = sha256(content);
    const size = content.length;
    expect((await piece(hash, size, 0, content.slice(0, 1000))).body).toEqual({ received: 1000, complete: false });
    expect((await piece(hash, size, 0, content.slice(0, 1000))).body).toEqual({ received: 1000, complete: false });
    const skipping = await piece(hash, size, 2000, content.slice(2000, 2500));
    expect(skipping.status).toBe(400);
    expect(skipping.body.error.details).toMatchObject({ received: 1000 });
    expect((await piece(hash, size, 1000, content.slice(1000, 2000))).body).toEqual({
      received: 2000,
      complete: false,
    });
    expect((await piece(hash, size, 2000, content.slice(2000))).body).toEqual({ received: size, complete: true });
    // The last piece again (its answer lost): the blob is there.
    expect((await piece(hash, size, 2000, content.slice(2000))).body).toEqual({ received: size, complete: true });
    const synced = await sync([{ op: 'write', path: 'pieces.txt', blob: hash, size, baseVersion: null }]);
    expect(synced.body).toMatchObject({ committed: ['pieces.txt'], conflicts: [], skipped: [] });
    expect(synced.body.entries).toEqual([expect.objectContaining({ path: 'pieces.txt', blob: hash, size })]);
    expect((await read('pieces.txt')).body.result.content).toBe(content);
  });

  it('takes many small blobs in one framed batch', async () => {
    const answer = await send(holder, 'POST', `${base()}/blobs?token=${job.token}`, frames('one\n', 'two\n'));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.stored).toEqual([sha256('one\n'), sha256('two\n')]);
    const synced = await sync([
      { op: 'write', path: 'one.txt', blob: sha256('one\n'), size: 4, baseVersion: null },
      { op: 'write', path: 'two.txt', blob: sha256('two\n'), size: 4, baseVersion: null },
    ]);
    expect(synced.body.committed).toEqual(['one.txt', 'two.txt']);
    expect((await read('two.txt')).body.result.content).toBe('two\n');
  });

  it('stores nothing for bytes that do not hash to their id, in one piece, in pieces or in a batch', async () => {
    const claimed = sha256('what was promised\n');
    const whole = await piece(claimed, 10, 0, 'other data');
    expect(whole.status).toBe(400);
    expect(whole.body.error.code).toBe('invalid_argument');
    expect((await piece(claimed, 20, 0, 'other data')).body).toEqual({ received: 10, complete: false });
    expect((await piece(claimed, 20, 10, 'more data.')).status).toBe(400);
    const batch = await send(
      holder,
      'POST',
      `${base()}/blobs?token=${job.token}`,
      Buffer.concat([
        frames('good\n'),
        Buffer.from(claimed),
        Buffer.from([0, 0, 0, 0, 0, 0, 0, 3]),
        Buffer.from('bad'),
      ]),
    );
    expect(batch.status).toBe(400);
    const synced = await sync([
      { op: 'write', path: 'claimed.txt', blob: claimed, size: 10, baseVersion: null },
      { op: 'write', path: 'claimed-too.txt', blob: claimed, size: 20, baseVersion: null },
      { op: 'write', path: 'good.txt', blob: sha256('good\n'), size: 5, baseVersion: null },
      { op: 'write', path: 'fine.txt', contentBase64: Buffer.from('fine\n').toString('base64'), baseVersion: null },
    ]);
    expect(synced.body.committed).toEqual(['fine.txt']);
    expect(synced.body.skipped.map((entry: { path: string }) => entry.path)).toEqual([
      'claimed.txt',
      'claimed-too.txt',
      'good.txt',
    ]);
    expect(synced.body.skipped[0].reason).toContain('not uploaded');
  });

  it('refuses a blob over TOOLGATE_MAX_FILE_BYTES with 413, storing nothing', async () => {
    const answer = await piece(sha256('x'), 40 * MiB, 0, 'x');
    expect(answer.status).toBe(413);
    expect(answer.body.error).toMatchObject({ code: 'payload_too_large', details: { limit: 32 * MiB } });
    expect(answer.body.error.message).toContain('TOOLGATE_MAX_FILE_BYTES');
  });

  it('refuses a key that does not hold the lease (403) and a stale token (409)', async () => {
    const other = await createRunnerKey(server, [ws]);
    const foreign = await piece(sha256('x'), 1, 0, 'x', job.token, other);
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe('forbidden');
    const foreignBatch = await send(other, 'POST', `${base()}/blobs?token=${job.token}`, frames('x'));
    expect(foreignBatch.status).toBe(403);
    expect((await piece(sha256('x'), 1, 0, 'x', job.token + 1)).status).toBe(409);
  });

  it('refuses a malformed upload: the wrong content type, a piece past the size, a bad id, a body that is not frames', async () => {
    const hash = sha256('abc');
    const expectInvalid = (answer: ApiAnswer) =>
      expect({ status: answer.status, code: answer.body.error?.code }).toEqual({
        status: 400,
        code: 'invalid_argument',
      });
    expectInvalid(
      await send(
        holder,
        'PUT',
        `${base()}/blobs/${hash}?token=${job.token}&offset=0&size=3`,
        'abc',
        'application/json',
      ),
    );
    expectInvalid(await piece(hash, 3, 2, 'abc'));
    expectInvalid(await piece('not-a-hash', 3, 0, 'abc'));
    expectInvalid(await send(holder, 'PUT', `${base()}/blobs/${hash}?token=${job.token}&offset=0`, 'abc'));
    expectInvalid(await send(holder, 'POST', `${base()}/blobs?token=${job.token}`, 'these are not frames'));
    expectInvalid(
      await send(
        holder,
        'POST',
        `${base()}/blobs?token=${job.token}`,
        Buffer.concat([Buffer.from(hash), Buffer.from([0, 0, 0, 0, 0, 0, 0, 9]), Buffer.from('abc')]),
      ),
    );
  });
});
