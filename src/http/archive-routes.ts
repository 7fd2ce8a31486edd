// Workspace archives: GET streams a directory as a tar (or gzip'd tar), PUT applies one in a single commit.
import { Hono } from 'hono';
import { archiveDownloadQuery, archiveUploadQuery } from '../contract/http-requests.ts';
import { parseInput } from '../contract/parse-input.ts';
import { arrived, type ArrivingBytes } from '../core/arriving-bytes.ts';
import { concatBytes } from '../core/bytes.ts';
import { isToolError, ToolError } from '../core/errors.ts';
import type { Access } from '../core/path-guard.ts';
import { commitArchive } from '../workspace/archive-commit.ts';
import { CHUNK_BYTES, packArchive, TarChunks } from '../workspace/archive-pack.ts';
import { MAX_ARCHIVE_ENTRIES, unpackArchive, type UnpackedArchive } from '../workspace/archive-unpack.ts';
import type { Workspace } from '../workspace/workspace.ts';
import type { AppDeps, AppEnv } from './app-deps.ts';
import { assertMayRewrite } from './route-access.ts';

const GZIP_MAGIC = [0x1f, 0x8b];

/**
 * The archive routes of a workspace (its route group admits keys whose scope holds it). Neither is
 * a tool call, so neither is metered; applying an archive rewrites many files at once, so it needs
 * a key that may write unasked, as restore and import do.
 */
export function archiveRoutes(
  deps: Pick<AppDeps, 'workspaces' | 'tools' | 'limits' | 'readBody' | 'sendBody' | 'onInternalError'>,
): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();

  routes.get('/workspaces/:ws/archive', async (c) => {
    const id = c.req.param('ws');
    const query = parseInput(archiveDownloadQuery, c.req.query(), 'archive query');
    const workspace = deps.workspaces.open(id);
    const root = await archiveRoot(workspace, query.prefix, 'read');
    const mtime = new Date();
    const gzip = query.format === 'tgz';
    const name = [id, ...root.split('/').filter(Boolean)].join('-').replace(/[^A-Za-z0-9._-]/g, '_');
    const headers = {
      'content-type': gzip ? 'application/gzip' : 'application/x-tar',
      'content-disposition': `attachment; filename="${name}${gzip ? '.tar.gz' : '.tar'}"`,
    };
    // A tar goes straight to the connection where the home can send it so (chunks reused once written).
    const sent = gzip
      ? undefined
      : deps.sendBody?.(
          c.env,
          {
            status: 200,
            headers,
            body: { chunkBytes: CHUNK_BYTES, make: (newChunk) => new TarChunks(workspace, root, mtime, newChunk) },
          },
          deps.onInternalError,
        );
    if (sent !== undefined) return sent;
    const tar = packArchive(workspace, root, mtime);
    return c.body(gzip ? tar.pipeThrough(new CompressionStream('gzip')) : tar, 200, headers);
  });

  routes.put('/workspaces/:ws/archive', async (c) => {
    const id = c.req.param('ws');
    const query = parseInput(archiveUploadQuery, c.req.query(), 'archive query');
    const workspace = deps.workspaces.open(id);
    assertMayRewrite(deps.tools, c.get('key'), 'apply an archive');
    const root = await archiveRoot(workspace, query.prefix, 'write');
    const tar = await tarBody(c.req.raw, deps.limits.maxBodyBytes, (length) => deps.readBody?.(c.env, length));
    const archive = await unpackArchive(workspace, tar, root, {
      maxFileBytes: deps.limits.maxFileBytes,
      maxEntries: MAX_ARCHIVE_ENTRIES,
    }).catch(async (error: unknown) => {
      // Refused before the body has all arrived: the answer waits for the rest, as it did when
      // the body was read whole first, so the client, still sending, hears it rather than a reset.
      await tar.until(tar.bytes.byteLength).catch(() => undefined);
      throw error;
    });
    const { version, deleted } = await commitArchive(workspace, archive.entries, root, query.mode, archive.contents);
    return c.json({
      ...counts(archive),
      deleted,
      version: version ?? deps.workspaces.info(id)?.version ?? 0,
      skipped: archive.skipped,
    });
  });

  return routes;
}

/** The directory `prefix` names, through the guard: an archive is made of one that exists, and unpacked into one or where one may be made. */
async function archiveRoot(workspace: Workspace, prefix: string, access: Access): Promise<string> {
  const resolved = await workspace.resolve(prefix, access, { directory: true });
  if (!resolved.entry && access === 'read')
    throw new ToolError('not_found', `${prefix} does not exist.`, { path: prefix });
  if (resolved.entry && resolved.entry.type !== 'dir')
    throw new ToolError('invalid_argument', `prefix ${JSON.stringify(prefix)} is a file, not a directory.`, {
      path: prefix,
    });
  return resolved.path;
}

/**
 * The request body as the tar it holds: gunzipped when it starts with gzip's magic bytes, whatever
 * its Content-Type. The body as sent and the tar it unpacks to are each counted against the body
 * limit, the tar as it streams out of gzip, so a gzip bomb stops being read as soon as it unpacks
 * past the limit. A tar body with a Content-Length is read as it arrives where the home can
 * (`readBody`: the Node home fills one array of that length from the socket, see ArrivingBytes),
 * so its unpacking overlaps the upload; otherwise (and for a gzip'd one) it is read whole first,
 * a declared length by `arrayBuffer()`, which on Node skips the web stream that copied each chunk
 * it passed on, a chunked one counted as it streams.
 */
async function tarBody(
  request: Request,
  maxBytes: number,
  readBody: (length: number) => ArrivingBytes | undefined,
): Promise<ArrivingBytes> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge(maxBytes, 'The archive body');
  if (declared !== null) {
    const arriving = readBody(Number(declared));
    if (arriving !== undefined) {
      await arriving.until(GZIP_MAGIC.length);
      if (!isGzip(arriving.bytes.subarray(0, arriving.available))) return arriving;
      await arriving.until(arriving.bytes.byteLength);
    }
    const body = arriving?.bytes ?? new Uint8Array(await request.arrayBuffer());
    if (!isGzip(body)) return arrived(body);
    return arrived(await readAll(inSlices(body).pipeThrough(gunzip()), { maxBytes, what: 'The archive, unpacked,' }));
  }
  const sent = (request.body ?? new Blob([]).stream()).pipeThrough(byteLimit(maxBytes, 'The archive body'));
  const { stream, head } = await peek(sent, GZIP_MAGIC.length);
  if (!isGzip(head)) return arrived(await readAll(stream));
  return arrived(await readAll(stream.pipeThrough(gunzip()), { maxBytes, what: 'The archive, unpacked,' }));
}

/** Bytes received whole, as a stream of slices pulled one at a time: gzip unpacks a slice at a time, so a bomb is stopped a slice past the limit. */
function inSlices(bytes: Uint8Array, size = 64 * 1024): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (at >= bytes.byteLength) return controller.close();
        controller.enqueue(bytes.subarray(at, (at += size)));
      },
    },
    { highWaterMark: 0 },
  );
}

function isGzip(head: Uint8Array): boolean {
  return GZIP_MAGIC.every((byte, index) => head[index] === byte);
}

function gunzip(): TransformStream<Uint8Array, Uint8Array> {
  return new DecompressionStream('gzip') as TransformStream<Uint8Array, Uint8Array>;
}

/**
 * Every byte of the stream, in one array, refused past `limit`; a gzip that cannot be read is the
 * caller's mistake, limits pass through.
 */
async function readAll(
  stream: ReadableStream<Uint8Array>,
  limit?: { maxBytes: number; what: string },
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read().catch((error: unknown) => {
      if (isToolError(error)) throw error;
      throw new ToolError(
        'invalid_argument',
        `The body is not a tar archive (or a gzip'd one) that can be read: ${error instanceof Error ? error.message : String(error)} Send a tar, or a tar gzip'd.`,
      );
    });
    if (done) break;
    length += value.byteLength;
    // Counted here rather than by a stream between: gzip's output comes in many small chunks.
    if (limit !== undefined && length > limit.maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(limit.maxBytes, limit.what);
    }
    chunks.push(value);
  }
  return concatBytes(chunks, length);
}

/** The first `count` bytes of a stream (fewer when it is shorter), and a stream of all its bytes. */
async function peek(
  source: ReadableStream<Uint8Array>,
  count: number,
): Promise<{ stream: ReadableStream<Uint8Array>; head: Uint8Array }> {
  const reader = source.getReader();
  const early: Uint8Array[] = [];
  let length = 0;
  while (length < count) {
    const { done, value } = await reader.read();
    if (done) break;
    early.push(value);
    length += value.byteLength;
  }
  const head = new Uint8Array(Math.min(length, count));
  for (let at = 0, index = 0; at < head.byteLength; index += 1) {
    head.set(early[index]!.subarray(0, head.byteLength - at), at);
    at += early[index]!.byteLength;
  }
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const chunk = early.shift();
      if (chunk !== undefined) return controller.enqueue(chunk);
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return { stream, head };
}

/** Passes bytes through until more than `maxBytes` have passed, then fails with payload_too_large. */
function byteLimit(maxBytes: number, what: string): TransformStream<Uint8Array, Uint8Array> {
  let total = 0;
  return new TransformStream({
    transform(chunk, controller) {
      total += chunk.byteLength;
      if (total > maxBytes) throw tooLarge(maxBytes, what);
      controller.enqueue(chunk);
    },
  });
}

function tooLarge(maxBytes: number, what: string): ToolError {
  return new ToolError(
    'payload_too_large',
    `${what} is over the limit of ${maxBytes} bytes (TOOLGATE_MAX_BODY_BYTES); nothing was changed. Send the tree in parts, each with its prefix.`,
    { limit: maxBytes },
  );
}

function counts(archive: UnpackedArchive) {
  let files = 0;
  let symlinks = 0;
  let directories = 0;
  let bytes = 0;
  for (const entry of archive.entries.values()) {
    if (entry.type === 'file') {
      files += 1;
      bytes += entry.size;
    } else if (entry.type === 'symlink') symlinks += 1;
    else directories += 1;
  }
  return { files, symlinks, directories, bytes };
}
