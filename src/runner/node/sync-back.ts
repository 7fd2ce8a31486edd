// Sends what a command changed to the server: files over the file limit stay behind, larger contents
// go ahead raw (in pieces that fit the body limit), small ones inline, and one sync commits them all.
import { randomUUID } from 'node:crypto';
import { blobFrameStream } from '../../contract/blob-frames.ts';
import type { LeasedJob, RunnerChange, SyncAnswer, SyncChange } from '../../contract/runner-protocol.ts';
import { StaleLeaseError, type RunnerClient } from '../runner-client.ts';
import { concurrently } from '../../core/concurrently.ts';
import { sha256 } from './blob-files.ts';

/** Files up to this size may go inline in the sync; a larger one costs less sent raw than as base64 inside JSON. */
const INLINE_MAX_BYTES = 64 * 1024;
/** An upload request carries up to this much: a few large requests, never a large buffer. */
const UPLOAD_REQUEST_BYTES = 4 * 1024 * 1024;
/** The body limit assumed when a server does not say (its default). */
const DEFAULT_BODY_BYTES = 10 * 1024 * 1024;
/** A batch frame's id and length, before its bytes. */
const FRAME_HEADER_BYTES = 72;
/** Room a sync body keeps for its token, id and JSON punctuation. */
const SYNC_SLACK_BYTES = 4096;
/** Upload requests in flight at once. */
const UPLOADS_AT_ONCE = 4;

export interface SentChanges {
  /** The server's answer to the sync (empty when nothing was left to send). */
  answer: SyncAnswer;
  /** Files over the server's file limit: not sent, so not kept. */
  tooLarge: { path: string; size: number }[];
  /** Files whose content could not be uploaded: left out of the sync, with why. */
  failed: { path: string; reason: string }[];
  /** How many changes the sync named. */
  sent: number;
}

interface Upload {
  hash: string;
  bytes: Uint8Array;
}

/**
 * Commits `changes` in one sync. A file that is too large, or whose upload fails, is left out and
 * reported, never holding back the rest; only a stale lease stops it (the job is abandoned).
 */
export async function sendChanges(
  client: RunnerClient,
  job: LeasedJob,
  changes: readonly RunnerChange[],
): Promise<SentChanges> {
  const maxFileBytes = job.maxFileBytes ?? Infinity;
  const bodyBytes = job.maxBodyBytes ?? DEFAULT_BODY_BYTES;
  const tooLarge: SentChanges['tooLarge'] = [];
  const kept = changes.filter((change) => {
    if (change.op !== 'write' || change.content.byteLength <= maxFileBytes) return true;
    tooLarge.push({ path: change.path, size: change.content.byteLength });
    return false;
  });
  // What the sync says of every change but inline content; the rest of its body holds inline files.
  // A server that names no body limit takes no uploads either: everything goes inline, as it expects.
  const uploading = job.maxBodyBytes !== undefined;
  const inlineMaxBytes = uploading ? INLINE_MAX_BYTES : Infinity;
  let inlineRoom = uploading
    ? bodyBytes -
      SYNC_SLACK_BYTES -
      kept.reduce((sum, change) => sum + Buffer.byteLength(JSON.stringify(change.path)) + 200, 0)
    : Infinity;
  const wire: (SyncChange | undefined)[] = [];
  const uploads = new Map<string, Upload>();
  const hashes: (string | undefined)[] = [];
  for (const change of kept) {
    if (change.op !== 'write') {
      wire.push(change);
      hashes.push(undefined);
      continue;
    }
    const { path, content, baseVersion } = change;
    const base64Bytes = 4 * Math.ceil(content.byteLength / 3);
    if (content.byteLength <= inlineMaxBytes && base64Bytes <= inlineRoom) {
      inlineRoom -= base64Bytes;
      wire.push({
        op: 'write',
        path,
        contentBase64: Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('base64'),
        baseVersion,
      });
      hashes.push(undefined);
      continue;
    }
    const hash = sha256(content);
    uploads.set(hash, { hash, bytes: content });
    wire.push({ op: 'write', path, blob: hash, size: content.byteLength, baseVersion });
    hashes.push(hash);
  }
  const refused = await upload(client, job, [...uploads.values()], Math.min(UPLOAD_REQUEST_BYTES, bodyBytes));
  const failed: SentChanges['failed'] = [];
  const sending: SyncChange[] = [];
  wire.forEach((change, index) => {
    const reason = refused.get(hashes[index] ?? '');
    if (reason === undefined) sending.push(change!);
    else failed.push({ path: change!.path, reason });
  });
  const answer =
    sending.length > 0
      ? await client.sync(job, job.token, sending, randomUUID())
      : { committed: [], entries: [], conflicts: [], skipped: [], version: null };
  return { answer, tooLarge, failed, sent: sending.length };
}

/**
 * Uploads the blobs: small ones framed together into batches, larger ones in pieces, each request
 * within `requestBytes`. Answers why each blob that could not be uploaded was not.
 */
async function upload(
  client: RunnerClient,
  job: LeasedJob,
  blobs: readonly Upload[],
  requestBytes: number,
): Promise<Map<string, string>> {
  const tasks: Upload[][] = [];
  let batch: Upload[] = [];
  let batchBytes = 0;
  for (const blob of blobs) {
    const framed = FRAME_HEADER_BYTES + blob.bytes.byteLength;
    if (framed > requestBytes) {
      tasks.push([blob]);
      continue;
    }
    if (batchBytes + framed > requestBytes) {
      tasks.push(batch);
      batch = [];
      batchBytes = 0;
    }
    batch.push(blob);
    batchBytes += framed;
  }
  if (batch.length > 0) tasks.push(batch);
  const refused = new Map<string, string>();
  await concurrently(tasks, UPLOADS_AT_ONCE, async (task) => {
    try {
      if (task.length === 1 && FRAME_HEADER_BYTES + task[0]!.bytes.byteLength > requestBytes)
        await uploadInPieces(client, job, task[0]!, requestBytes);
      else
        await client.uploadBlobs(
          job,
          job.token,
          new Uint8Array(await new Response(blobFrameStream(task)).arrayBuffer()),
        );
    } catch (error) {
      if (error instanceof StaleLeaseError) throw error;
      for (const blob of task) refused.set(blob.hash, `its content could not be uploaded: ${(error as Error).message}`);
    }
  });
  return refused;
}

async function uploadInPieces(client: RunnerClient, job: LeasedJob, blob: Upload, pieceBytes: number): Promise<void> {
  const size = blob.bytes.byteLength;
  for (let offset = 0; offset < size;) {
    const progress = await client.uploadPiece(
      job,
      job.token,
      blob.hash,
      size,
      offset,
      blob.bytes.subarray(offset, Math.min(size, offset + pieceBytes)),
    );
    if (progress.complete) return;
    // The server says where the next piece goes (past one it already held, when a retry repeated it).
    if (progress.received <= offset) throw new Error(`the server took no bytes of the piece at offset ${offset}`);
    offset = progress.received;
  }
  throw new Error(`the server did not store blob ${blob.hash} after its last piece`);
}
