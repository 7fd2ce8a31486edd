// The runner protocol: runners lease jobs, read workspaces, stream output, sync changes and report exits.
import { fromBase64 } from '../core/base64.ts';
import { Hono, type Context } from 'hono';
import type { z } from 'zod';
import { blobFrameStream } from '../contract/blob-frames.ts';
import { parseInput } from '../contract/parse-input.ts';
import {
  blobBatchRequestSchema,
  exitReportSchema,
  heartbeatReportSchema,
  leaseRequestSchema,
  outputQuerySchema,
  outputReportSchema,
  startedReportSchema,
  syncReportSchema,
  type LeasedJob,
  type SyncResult,
} from '../contract/runner-protocol.ts';
import { sha256Hex } from '../core/content-hash.ts';
import { ToolError } from '../core/errors.ts';
import type { ProcessStore } from '../processes/process-store.ts';
import type { JobLease, LeaseFence } from '../processes/runner-reports.ts';
import type { ManifestEntry } from '../workspace/manifest.ts';
import { syncChanges, type SyncedChange } from '../workspace/sync-changes.ts';
import type { AppDeps, AppEnv } from './app-deps.ts';
import { readBodyBytes, readJsonBody } from './json-body.ts';
import { addUploadRoutes } from './runner-upload-routes.ts';

/** Output sent as text: text/plain, in UTF-8 when it names a charset. */
const TEXT_BODY = /^text\/plain\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The runner protocol. Its route group (route-access.ts) admits runner keys only, and only for
 * workspaces in their scope; past that, a runner reads a workspace only while its key holds a live
 * lease on one of the workspace's jobs, and reports on a process only with the lease's token and key.
 */
export function runnerRoutes(deps: AppDeps & { processes: ProcessStore }): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const { processes } = deps;
  const fence = (c: Context<AppEnv>, token: number): LeaseFence => ({ token, keyId: c.get('key').id });
  const leaseHeld = async (c: Context<AppEnv>, next: () => Promise<void>) => {
    processes.assertLeaseIn(c.req.param('ws')!, c.get('key').id);
    await next();
  };
  routes.use('/runner/workspaces/:ws/manifest', leaseHeld);
  routes.use('/runner/workspaces/:ws/blobs', leaseHeld);
  routes.use('/runner/workspaces/:ws/blobs/*', leaseHeld);
  /**
   * The process a report names, which must belong to the workspace in its path; one that does not
   * (deleted with its workspace) refuses every report as a stale lease does, so the runner abandons it.
   */
  const processOf = (c: Context<AppEnv>): string => {
    const id = c.req.param('id')!;
    const workspace = c.req.param('ws')!;
    if (!processes.get(workspace, id)) {
      throw new ToolError(
        'conflict',
        `the lease token is stale: process ${id} does not exist in workspace ${workspace}, so abandon this job.`,
        { processId: id },
      );
    }
    return id;
  };
  const body = async <S extends z.ZodType>(c: Context<AppEnv>, schema: S): Promise<z.output<S>> =>
    parseInput(schema, await readJsonBody(c.req.raw, deps.limits.maxBodyBytes), 'runner report');
  addUploadRoutes(routes, deps, { processOf, fence });

  routes.post('/runner/lease', async (c) => {
    const input = await body(c, leaseRequestSchema);
    const key = c.get('key');
    const holder = { keyId: key.id, workspaces: key.workspaces };
    const wish = { execOnly: input.execOnly };
    let job = processes.lease(input.runnerId, holder, wish);
    if (!job && input.waitMs) {
      const woken = (await processes.waitForJob(holder, wish, input.waitMs)) === 'woken';
      // A runner that hung up while waiting must not be handed a job it will never run.
      if (!c.req.raw.signal.aborted) job = processes.lease(input.runnerId, holder, wish);
      // A job this request was woken for and did not take, or more jobs queued than waiters woken
      // (a burst, a requeue): the next waiter is woken.
      if (woken) processes.passOnJob();
    }
    if (!job) return c.body(null, 204);
    return c.json({ job: leasedJobBody(job, deps) });
  });

  routes.get('/runner/workspaces/:ws/manifest', (c) => {
    const id = c.req.param('ws');
    const workspace = deps.workspaces.open(id);
    // Read together (one synchronous stretch), so the entries are exactly those of that version.
    const version = deps.workspaces.info(id)?.version ?? 0;
    return c.json({ version, entries: workspace.manifestEntries().map(wireEntry) });
  });

  routes.get('/runner/workspaces/:ws/blobs/:hash', async (c) => {
    const hash = c.req.param('hash');
    if (!/^[0-9a-f]{64}$/.test(hash))
      throw new ToolError('invalid_argument', 'A blob id is 64 lowercase hex digits.', { blob: hash });
    const bytes = await deps.workspaces.open(c.req.param('ws')).blob(hash);
    return c.body(bytes as Uint8Array<ArrayBuffer>, 200, { 'content-type': 'application/octet-stream' });
  });

  // The answer is binary (see blob-frames.ts): for each distinct id asked for, in the order asked,
  // the 64 hex digits of the id, the blob's length as 8 bytes big-endian, then its bytes. Every
  // blob is read before the answer starts, so a missing one is an error status, never a short body.
  routes.post('/runner/workspaces/:ws/blobs', async (c) => {
    const input = await body(c, blobBatchRequestSchema);
    const workspace = deps.workspaces.open(c.req.param('ws'));
    const hashes = [...new Set(input.hashes)];
    // Those in memory at once; the rest read side by side: a store with a round trip per object
    // (S3, R2) would otherwise add them up.
    const contents = hashes.map((hash) => workspace.cachedBlob(hash));
    const missing = contents.flatMap((bytes, index) => (bytes === undefined ? [index] : []));
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(16, missing.length) }, async () => {
        while (next < missing.length) {
          const index = missing[next++]!;
          contents[index] = await workspace.blob(hashes[index]!);
        }
      }),
    );
    const frames = blobFrameStream(hashes.map((hash, index) => ({ hash, bytes: contents[index]! })));
    return c.body(frames, 200, { 'content-type': 'application/octet-stream' });
  });

  routes.post('/runner/workspaces/:ws/processes/:id/started', async (c) => {
    const input = await body(c, startedReportSchema);
    processes.started(processOf(c), fence(c, input.token), input.pid);
    return c.json({ ok: true });
  });

  // Two forms: JSON ({token, data, offset?, skipped?}), or the text as a UTF-8 text/plain body with
  // token, offset and skipped in the query, which spares encoding and parsing megabytes of JSON.
  routes.post('/runner/workspaces/:ws/processes/:id/output', async (c) => {
    const input = TEXT_BODY.test(c.req.header('content-type') ?? '')
      ? {
          ...parseInput(outputQuerySchema, c.req.query(), 'runner report'),
          data: await readTextBody(c.req.raw, deps.limits.maxBodyBytes),
        }
      : await body(c, outputReportSchema);
    return c.json({
      end: processes.appendOutput(processOf(c), fence(c, input.token), input.data, input.offset, input.skipped),
    });
  });

  // With waitMs this is the runner's control request, held open while its process runs: it answers
  // as soon as stdin or a stop is written, and ends when the runner hangs up.
  routes.post('/runner/workspaces/:ws/processes/:id/heartbeat', async (c) => {
    const { token: leaseToken, ...request } = await body(c, heartbeatReportSchema);
    return c.json(await processes.control(processOf(c), fence(c, leaseToken), request, c.req.raw.signal));
  });

  routes.post('/runner/workspaces/:ws/processes/:id/sync', async (c) => {
    const id = processOf(c);
    const input = await body(c, syncReportSchema);
    // Proves the token still holds the job, and renews the lease for the commit.
    processes.renew(id, fence(c, input.token));
    const record = processes.record(id);
    if (!record) throw new ToolError('not_found', `Process ${id} does not exist.`, { processId: id });
    const changes = input.changes.map((change): SyncedChange => {
      if (change.op !== 'write') return change;
      const { path, baseVersion } = change;
      return change.contentBase64 !== undefined
        ? { op: 'write', path, content: fromBase64(change.contentBase64), baseVersion }
        : { op: 'write', path, blob: change.blob!, size: change.size!, baseVersion };
    });
    const { syncId } = input;
    const recorded = syncId === undefined ? undefined : processes.syncResult<SyncResult>(id, syncId);
    const workspace = deps.workspaces.open(record.workspace);
    const onCommit =
      syncId === undefined ? undefined : (landed: SyncResult) => processes.recordSync(id, syncId, landed);
    const result =
      recorded ?? (await syncChanges(workspace, changes, { maxFileBytes: deps.limits.maxFileBytes, onCommit }));
    // What this job staged is spent once its sync names the uploads (an error leaves it for the next cleanup).
    if (changes.some((change) => 'blob' in change)) await workspace.uploads.discard(id).catch(() => undefined);
    // The committed entries as the commit made them (not as they stand now: a later API write must
    // stay a conflict), so the runner's copy knows their versions without a manifest read.
    return c.json({ ...result, entries: await committedEntries(changes, result) });
  });

  routes.post('/runner/workspaces/:ws/processes/:id/exit', async (c) => {
    const input = await body(c, exitReportSchema);
    const { token, ...report } = input;
    const record = processes.finish(processOf(c), fence(c, token), report);
    return c.json({ status: record.status });
  });

  return routes;
}

/** What a runner is told about a job it leased: the same on every home. */
export function leasedJobBody(
  job: JobLease,
  deps: Pick<AppDeps, 'workspaces' | 'limits'> & { processes: ProcessStore },
): LeasedJob {
  const { record } = job;
  return {
    processId: job.processId,
    token: job.token,
    leaseMs: job.leaseMs,
    workspace: record.workspace,
    command: record.command,
    cwd: record.cwd,
    env: record.env,
    mode: record.mode,
    timeoutMs: record.timeoutMs,
    // start with tty: the pseudo-terminal's size; absent (or null from older servers): pipes.
    terminal: record.terminal,
    // A runner whose copy is at this version need not fetch the manifest again.
    workspaceVersion: deps.workspaces.info(record.workspace)?.version ?? null,
    // A runner keeps one copy per incarnation: a workspace made again under the name starts afresh.
    incarnation: deps.workspaces.incarnation(record.workspace) ?? null,
    // Output older than this many characters is never kept: a runner far behind may skip it.
    outputChars: deps.processes.maxOutputChars,
    // A larger file the command leaves is not kept; each request, an upload's pieces too, fits the body limit.
    maxFileBytes: deps.limits.maxFileBytes,
    maxBodyBytes: deps.limits.maxBodyBytes,
  };
}

/** A text body, its bytes counted against the limit (as they stream in when there is no Content-Length). */
async function readTextBody(request: Request, maxBytes: number): Promise<string> {
  const bytes = await readBodyBytes(request, maxBytes);
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ToolError('invalid_argument', 'The output body is not valid UTF-8; send the text encoded as UTF-8.');
  }
}

async function committedEntries(changes: readonly SyncedChange[], result: SyncResult) {
  if (result.version === null) return [];
  const committed = new Set(result.committed);
  const entries = [];
  for (const change of changes) {
    if (!committed.has(change.path) || change.op === 'delete') continue;
    const base = { path: change.path, version: result.version };
    if (change.op === 'write' && 'blob' in change)
      entries.push({ ...base, type: 'file', blob: change.blob, target: null, size: change.size });
    else if (change.op === 'write')
      entries.push({
        ...base,
        type: 'file',
        blob: await sha256Hex(change.content),
        target: null,
        size: change.content.byteLength,
      });
    else if (change.op === 'symlink')
      entries.push({ ...base, type: 'symlink', blob: null, target: change.target, size: 0 });
    else entries.push({ ...base, type: 'dir', blob: null, target: null, size: 0 });
  }
  return entries;
}

function wireEntry({ path, type, blob, target, size, version }: ManifestEntry) {
  return { path, type, blob, target, size, version };
}
