// Forks on the Cloudflare home, where each workspace's object has a database of its own: the
// source's object reads its manifest and history rows at once (nothing else runs in the object
// meanwhile: the reads are synchronous), then sends them to the new workspace's object in
// batches; that object keeps them under the fork's uid and adopts them in one transaction at the
// end (workspace/fork-transfer.ts). Contents are not sent: both read the same store in R2.
import { fromBase64, toBase64 } from '../core/base64.ts';
import { ToolError } from '../core/errors.ts';
import { workspaceCalls, type ObjectCall, type ObjectCallAnswerInput } from '../contract/object-calls.ts';
import type { WorkspaceHistory } from '../history/workspace-history.ts';
import type { ForkedEntry } from '../workspace/fork-transfer.ts';
import type { WorkspaceInfo } from '../workspace/workspaces.ts';
import { assertWorkspaceId, type Workspaces } from '../workspace/workspaces.ts';
import { callObject, workspaceObject, type Env } from './bindings.ts';
import type { z } from 'zod';

/** Bytes of JSON a row may take at most beside its strings (field names, numbers, a hash). */
const ROW_OVERHEAD = 256;

/**
 * Splits rows into batches whose JSON stays within `budget` bytes, counting each string at its
 * largest UTF-8 size (3 bytes a UTF-16 unit), so a call is never refused for its size.
 */
function* inBatches<Row>(rows: readonly Row[], strings: (row: Row) => number, budget: number): Generator<Row[]> {
  let batch: Row[] = [];
  let size = 0;
  for (const row of rows) {
    const bytes = ROW_OVERHEAD + 3 * strings(row);
    if (batch.length > 0 && size + bytes > budget) {
      yield batch;
      batch = [];
      size = 0;
    }
    batch.push(row);
    size += bytes;
  }
  if (batch.length > 0) yield batch;
}

type Serve = <Call extends ObjectCall>(
  call: Call,
  handle: (body: z.output<Call['body']>) => ObjectCallAnswerInput<Call> | Promise<ObjectCallAnswerInput<Call>>,
) => void;

/** What the fork route runs in the source's object; each call's body stays within half of `maxBodyBytes`. */
export function forkAcrossObjects(env: Env, workspaces: Workspaces, history: WorkspaceHistory, maxBodyBytes: number) {
  const budget = Math.floor(maxBodyBytes / 2);
  return async (from: string, to: string): Promise<WorkspaceInfo> => {
    assertWorkspaceId(to);
    // Onto itself: this object's own database answers (the name is taken), with no call to itself.
    if (to === from) return workspaces.fork(from, to);
    const source = workspaces.forkTransfer.forkSource(from);
    const uid = crypto.randomUUID();
    const store = source.store;
    // Joined before the rows are read: a family sweep that began earlier then deletes nothing, and
    // every later one asks the fork too, so no content the rows name can go meanwhile.
    await workspaces.forkTransfer.joinStoreFamily(store, [
      { uid: source.uid, workspace: from },
      { uid, workspace: to },
    ]);
    const snapshot = workspaces.forkTransfer.forkSnapshot(from);
    if (snapshot.uid !== source.uid)
      throw new ToolError(
        'conflict',
        `Workspace ${from} was deleted and created again while it was being forked; fork it again.`,
        { workspace: from },
      );
    const rows = history.forkRows(snapshot.uid);
    const target = workspaceObject(env, to);
    await callObject(target, workspaceCalls.forkBegin, { to, uid, store });
    const entryStrings = (entry: ForkedEntry) => entry.path.length + entry.parent.length + (entry.target?.length ?? 0);
    for (const entries of inBatches(snapshot.entries, entryStrings, budget))
      await callObject(target, workspaceCalls.forkEntries, { uid, entries });
    const none = { gitFiles: [], gitBlobs: [], checkpoints: [] };
    // The git directory's small files: HEAD, config, the branch.
    const gitFiles = rows.gitFiles.map((file) => ({
      path: file.path,
      contentBase64: toBase64(new Uint8Array(file.content)),
    }));
    for (const batch of inBatches(gitFiles, (file) => file.path.length + file.contentBase64.length, budget))
      await callObject(target, workspaceCalls.forkHistory, { uid, ...none, gitFiles: batch });
    for (const batch of inBatches(rows.gitBlobs, () => 0, budget))
      await callObject(target, workspaceCalls.forkHistory, { uid, ...none, gitBlobs: batch });
    for (const batch of inBatches(rows.checkpoints, (checkpoint) => checkpoint.message.length, budget))
      await callObject(target, workspaceCalls.forkHistory, { uid, ...none, checkpoints: batch });
    const info = await callObject(target, workspaceCalls.forkFinish, { to, uid, workspace: snapshot.workspace });
    return info!;
  };
}

/** The calls the new workspace's object serves; `adopted` runs once the fork is its workspace. */
export function serveForkCalls(
  serve: Serve,
  workspaces: Workspaces,
  history: WorkspaceHistory,
  adopted: (workspace: string) => Promise<void>,
): void {
  serve(workspaceCalls.forkBegin, ({ to, uid, store }) => workspaces.forkTransfer.beginReceivingFork(to, uid, store));
  serve(workspaceCalls.forkEntries, ({ uid, entries }) => workspaces.forkTransfer.receiveForkEntries(uid, entries));
  serve(workspaceCalls.forkHistory, ({ uid, gitFiles, gitBlobs, checkpoints }) => {
    // Synchronous: no other call runs in the object between the check and the rows.
    workspaces.forkTransfer.assertReceivingFork(uid);
    history.addForkRows(uid, {
      gitFiles: gitFiles.map((file) => ({ path: file.path, content: fromBase64(file.contentBase64) })),
      gitBlobs,
      checkpoints,
    });
  });
  serve(workspaceCalls.forkFinish, async ({ to, uid, workspace }) => {
    const info = workspaces.forkTransfer.adoptFork(to, uid, workspace);
    await adopted(to);
    return info;
  });
}
