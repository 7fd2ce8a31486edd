// The runner protocol's uploads: the contents a command left, sent raw before the sync that names
// them, so a file of up to TOOLGATE_MAX_FILE_BYTES syncs back whatever the request body limit.
import type { Context, Hono } from 'hono';
import { ToolError } from '../core/errors.ts';
import type { ProcessStore } from '../processes/process-store.ts';
import type { LeaseFence } from '../processes/runner-reports.ts';
import { parseInput } from '../contract/parse-input.ts';
import { blobPieceQuerySchema, blobUploadQuerySchema } from '../contract/runner-protocol.ts';
import { sha256Hex } from '../core/content-hash.ts';
import type { AppDeps, AppEnv } from './app-deps.ts';
import { readBodyBytes } from './json-body.ts';

const BLOB_ID = /^[0-9a-f]{64}$/;
/** A frame's id (64 hex digits) and length (8 bytes, big-endian), as in blob-frames.ts. */
const HEADER_BYTES = 72;
const BINARY_BODY = /^application\/octet-stream\s*(?:;|$)/i;

/** How a report is tied to its job: the process it names, and the lease fence it presents. */
export interface ReportChecks {
  processOf(c: Context<AppEnv>): string;
  fence(c: Context<AppEnv>, token: number): LeaseFence;
}

/** Adds the upload routes to the runner protocol's routes; each needs the job's live lease, from the key that holds it. */
export function addUploadRoutes(
  routes: Hono<AppEnv>,
  deps: AppDeps & { processes: ProcessStore },
  checks: ReportChecks,
): void {
  const { processes, limits } = deps;

  // One piece of a blob: raw bytes at `offset` of a blob of `size` bytes whose SHA-256 is `hash`.
  // The blob is stored once the last piece is in and its hash checks out; until then the pieces
  // are staged in the object store, so a large blob never waits in memory between requests.
  routes.put('/runner/workspaces/:ws/processes/:id/blobs/:hash', async (c) => {
    const id = checks.processOf(c);
    const input = parseInput(blobPieceQuerySchema, c.req.query(), 'blob upload');
    processes.renew(id, checks.fence(c, input.token));
    const hash = blobId(c.req.param('hash'));
    withinFileLimit(hash, input.size, limits.maxFileBytes);
    const bytes = await binaryBody(c.req.raw, limits.maxBodyBytes);
    const workspace = deps.workspaces.open(c.req.param('ws'));
    const uploads = workspace.uploads;
    if (input.offset === 0 && bytes.byteLength < input.size) {
      // A new staged upload clears what jobs that can upload no more left behind.
      await uploads.discardAbandoned(
        (owner) => owner === id || ['queued', 'running'].includes(processes.get(workspace.id, owner)?.status ?? ''),
      );
    }
    return c.json(await uploads.receive({ owner: id, hash, size: input.size, offset: input.offset, bytes }));
  });

  // Many small blobs in one body, framed as the blob batch answer is: for each, its id as 64 hex
  // digits, its length as 8 bytes big-endian, its bytes. Every id is checked before any is stored.
  routes.post('/runner/workspaces/:ws/processes/:id/blobs', async (c) => {
    const id = checks.processOf(c);
    const { token } = parseInput(blobUploadQuerySchema, c.req.query(), 'blob upload');
    processes.renew(id, checks.fence(c, token));
    const frames = readFrames(await binaryBody(c.req.raw, limits.maxBodyBytes));
    for (const frame of frames) withinFileLimit(frame.hash, frame.bytes.byteLength, limits.maxFileBytes);
    for (const frame of frames) {
      const actual = await sha256Hex(frame.bytes);
      if (actual !== frame.hash) {
        throw new ToolError(
          'invalid_argument',
          `Blob ${frame.hash} of the batch hashes to ${actual}; nothing of the batch is stored. Send each blob's SHA-256 as its id.`,
          { blob: frame.hash, actual },
        );
      }
    }
    const workspace = deps.workspaces.open(c.req.param('ws'));
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(16, frames.length) }, async () => {
        while (next < frames.length) await workspace.storeBlob(frames[next++]!.bytes);
      }),
    );
    return c.json({ stored: [...new Set(frames.map((frame) => frame.hash))] });
  });
}

function blobId(hash: string): string {
  if (!BLOB_ID.test(hash))
    throw new ToolError('invalid_argument', 'A blob id is the SHA-256 of its content as 64 lowercase hex digits.', {
      blob: hash,
    });
  return hash;
}

function withinFileLimit(hash: string, size: number, maxFileBytes: number): void {
  if (size <= maxFileBytes) return;
  throw new ToolError(
    'payload_too_large',
    `Blob ${hash} is ${size} bytes, over the file limit of ${maxFileBytes} bytes (TOOLGATE_MAX_FILE_BYTES); such a file is not kept.`,
    {
      blob: hash,
      size,
      limit: maxFileBytes,
    },
  );
}

/** A binary body, its bytes counted against the body limit as they arrive. */
async function binaryBody(request: Request, maxBodyBytes: number): Promise<Uint8Array> {
  const type = request.headers.get('content-type');
  if (!BINARY_BODY.test(type ?? '')) {
    throw new ToolError(
      'invalid_argument',
      'A blob upload is raw bytes sent with Content-Type: application/octet-stream.',
      { contentType: type || null },
    );
  }
  return readBodyBytes(request, maxBodyBytes);
}

const latin1 = new TextDecoder('latin1');

/** The frames of an upload batch, each a view of the body; a body that does not split into whole frames is refused. */
function readFrames(body: Uint8Array): { hash: string; bytes: Uint8Array }[] {
  const frames: { hash: string; bytes: Uint8Array }[] = [];
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  for (let at = 0; at < body.byteLength;) {
    if (body.byteLength - at < HEADER_BYTES) throw malformed(`a frame header at byte ${at} is cut short`);
    const hash = latin1.decode(body.subarray(at, at + 64));
    if (!BLOB_ID.test(hash))
      throw malformed(`the frame at byte ${at} does not start with a blob id of 64 lowercase hex digits`);
    const length = view.getUint32(at + 64) * 2 ** 32 + view.getUint32(at + 68);
    const start = at + HEADER_BYTES;
    if (length > body.byteLength - start)
      throw malformed(`blob ${hash} claims ${length} bytes, more than the body holds`);
    frames.push({ hash, bytes: body.subarray(start, start + length) });
    at = start + length;
  }
  if (frames.length === 0) throw malformed('it holds no frame');
  return frames;
}

function malformed(why: string): ToolError {
  return new ToolError(
    'invalid_argument',
    `The blob batch is malformed: ${why}. Frame each blob as its 64 hex digit id, its length as 8 bytes big-endian, then its bytes.`,
  );
}
