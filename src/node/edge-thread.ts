// An edge thread of the Node home: reads and runs bash command lines with the edge engine's
// interpreter off the server's event loop (see edge-threads.ts). File contents come from the server
// thread when a command first reads them.
import { parentPort } from 'node:worker_threads';
import { isToolError, type ErrorCode, type ErrorDetails } from '../core/errors.ts';
import {
  GIVEN_TO_RUNNER,
  holdDefenceInDepth,
  interpret,
  runnerTakes,
  snapshotOf,
  type EdgeInterpretation,
  type EdgeRun,
} from '../tools/edge-bash/edge-interpreter.ts';
import { SharedContentBudget, type EdgeSnapshot } from '../tools/edge-bash/edge-snapshot.ts';
import type { ManifestEntry } from '../workspace/manifest-entry.ts';
import {
  KEPT_CONTENT_BYTES,
  KEPT_LISTING_ENTRIES,
  KeptContents,
  KeptListings,
  listingWeight,
} from './edge-thread-contents.ts';

/** What the server thread asks of an edge thread. */
export type EdgeThreadRequest =
  | {
      kind: 'interpret';
      id: number;
      /** Left out when the pool sent this listing to the thread before (it asks for them if it no longer holds them). */
      entries?: readonly ManifestEntry[];
      scope?: string;
      listing?: string;
      run: EdgeRun;
    }
  | {
      kind: 'read';
      readId: number;
      bytes?: Uint8Array | Uint8Array[];
      entries?: readonly ManifestEntry[];
      failure?: string;
    };

/** What an edge thread answers, or asks of the server thread (a file's bytes). */
export type EdgeThreadMessage =
  | { kind: 'interpreted'; id: number; interpretation: EdgeInterpretation }
  | { kind: 'error'; id: number; error: { code: ErrorCode; message: string; details: ErrorDetails | undefined } }
  | { kind: 'failure'; id: number; failure: string }
  | { kind: 'read'; id: number; readId: number; path: string; entry: ManifestEntry }
  | { kind: 'read-many'; id: number; readId: number; entries: readonly ManifestEntry[] }
  | { kind: 'read-listing'; id: number; readId: number };

const port = parentPort;
if (port === null) throw new Error('edge-thread.ts runs as a worker thread, started by EdgeThreadPool');
const send = (message: EdgeThreadMessage, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
// This thread runs nothing but the edge engine: its defence in depth is applied once, not per command.
void holdDefenceInDepth();

/** Contents this thread was sent, for the next commands of the same workspace (edge-thread-contents.ts). */
const kept = new KeptContents(KEPT_CONTENT_BYTES);
/**
 * Workspace states this thread was sent the listings of, by the state (edge-snapshot.ts): each
 * one's tree, shared by its next commands, with the contents they read kept within one budget.
 */
const states = new KeptListings<EdgeSnapshot>(KEPT_LISTING_ENTRIES, (dropped) => dropped.retire());
const statesContents = new SharedContentBudget(KEPT_CONTENT_BYTES);

/** Reads waiting for the server thread's answer, by id. */
const reading = new Map<number, { resolve: (bytes: never) => void; reject: (error: Error) => void }>();
let nextReadId = 0;

/** A file's bytes (or several files' in one round trip), for the command `id`, from the server thread. */
function read(id: number, path: string, entry: ManifestEntry): Promise<Uint8Array>;
function read(id: number, entries: readonly ManifestEntry[]): Promise<Uint8Array[]>;
/** The command's listing, when the thread no longer holds the one the pool thought it did. */
function read(id: number, what: 'listing'): Promise<readonly ManifestEntry[]>;
function read(id: number, what: string | readonly ManifestEntry[], entry?: ManifestEntry): Promise<unknown> {
  const readId = nextReadId++;
  return new Promise((resolve, reject) => {
    reading.set(readId, { resolve, reject });
    if (typeof what !== 'string') send({ kind: 'read-many', id, readId, entries: what });
    else if (entry === undefined) send({ kind: 'read-listing', id, readId });
    else send({ kind: 'read', id, readId, path: what, entry });
  });
}

async function answer(request: Exclude<EdgeThreadRequest, { kind: 'read' }>): Promise<void> {
  try {
    // Decided before the listing is asked for: a command given to a runner needs none.
    if (await runnerTakes(request.run)) {
      send({ kind: 'interpreted', id: request.id, interpretation: GIVEN_TO_RUNNER });
      return;
    }
    const source = kept.reader(request.scope, {
      read: (path: string, entry: ManifestEntry) => read(request.id, path, entry),
      readMany: (entries: readonly ManifestEntry[]) => read(request.id, entries),
    });
    let snapshot = states.get(request.listing);
    // A state is given only to commands of its own store (the listing names one state of one workspace).
    if (snapshot === undefined || snapshot.scope !== request.scope) {
      const entries = request.entries ?? (await read(request.id, 'listing'));
      snapshot = await snapshotOf(entries, { scope: request.scope, budget: statesContents });
    }
    states.keep(request.listing, snapshot, listingWeight(snapshot.entries.length));
    const interpretation = await interpret(
      { entries: snapshot.entries, snapshot, ...source },
      { ...request.run, requested: undefined },
    );
    // The written contents move to the server thread rather than being copied (each buffer once).
    const contents = new Set<ArrayBuffer>();
    for (const change of interpretation.changes)
      if (change.op === 'write' && change.content.buffer instanceof ArrayBuffer) contents.add(change.content.buffer);
    send({ kind: 'interpreted', id: request.id, interpretation }, [...contents]);
  } catch (error) {
    if (isToolError(error))
      send({
        kind: 'error',
        id: request.id,
        error: { code: error.code, message: error.message, details: error.details },
      });
    else
      send({
        kind: 'failure',
        id: request.id,
        failure: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
  }
}

port.on('message', (request: EdgeThreadRequest) => {
  if (request.kind !== 'read') {
    void answer(request);
    return;
  }
  const waiting = reading.get(request.readId);
  reading.delete(request.readId);
  if (request.bytes !== undefined) waiting?.resolve(request.bytes as never);
  else if (request.entries !== undefined) waiting?.resolve(request.entries as never);
  else waiting?.reject(new Error(request.failure ?? 'the file could not be read'));
});
