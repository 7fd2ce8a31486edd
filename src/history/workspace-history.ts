// Workspace history: checkpoints as git commits beside the workspace, the diff from one to now or to another, restore, and import from a git remote.
import { writeCommit } from 'isomorphic-git';
import { noEgress, type EgressFetch } from '../core/egress-fetch.ts';
import { isToolError, ToolError } from '../core/errors.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import type { Workspace } from '../workspace/workspace.ts';
import type { Workspaces } from '../workspace/workspaces.ts';
import { diffBetweenTrees, diffToWorkspace } from './checkpoint-diff.ts';
import { branchHead, moveBranch, openGitDirectory, type GitDirectory } from './git-directory.ts';
import { importRepository, type GitSource, type ImportLimits, type ImportResult } from './git-import.ts';
import { HistoryRecords, type CheckpointRow, type HistoryRows } from './history-records.ts';
import { planRestore } from './restore-plan.ts';
import { writeSnapshotTree } from './snapshot-tree.ts';
import { commitTree, listTree } from './tree-listing.ts';
import { consoleLog, type Log } from '../core/log.ts';

export interface Checkpoint {
  id: string;
  createdAt: string;
}

export interface HistoryOptions {
  limits: ImportLimits;
  /** What imports fetch through: the home's egress guard (without one, every import is refused). */
  egress?: EgressFetch;
  /** Where failures nobody waits for (an automatic checkpoint's) are reported. */
  log?: Log;
}

/** A tool call that ran, as ToolCalls reports it after the call's effect landed. */
export interface CompletedCall {
  tool: string;
  args: unknown;
  workspace: Workspace;
  result: unknown;
}

const CHECKPOINT_ID = /^[0-9a-f]{40}$/;
const AUTHOR = { name: 'toolgate', email: 'toolgate@localhost' };
/** Attempts when another checkpoint or write lands between reading and committing. */
const MAX_ATTEMPTS = 5;
export const DEFAULT_MESSAGE = 'checkpoint';

export class WorkspaceHistory {
  private readonly records: HistoryRecords;

  constructor(
    private readonly db: SqlDatabase,
    private readonly objects: ObjectStore,
    private readonly options: HistoryOptions,
  ) {
    this.records = new HistoryRecords(db);
  }

  /**
   * Forgets each workspace's history when the workspace is deleted, gives each fork its source's,
   * and keeps the contents checkpoints restore from out of the blob sweeper's reach.
   */
  attach(workspaces: Workspaces): this {
    workspaces.onDelete((uid) => this.records.forget(uid));
    workspaces.onFork((from, to) => this.records.copy(from, to));
    workspaces.onReferences((uids) => this.records.blobsOf(uids));
    return this;
  }

  /** The history rows of a workspace, for a fork made in another database (the git objects are shared by store). */
  forkRows(workspaceUid: string): HistoryRows {
    return this.records.rowsOf(workspaceUid);
  }

  /** Records a received fork's history rows; call inside the transaction that adopts the fork. */
  addForkRows(workspaceUid: string, rows: HistoryRows): void {
    this.records.addRows(workspaceUid, rows);
  }

  /** Commits the workspace as it is now on its history branch; the id is the commit's. */
  async checkpoint(workspace: Workspace, message?: string): Promise<Checkpoint> {
    const text = message === undefined || message.trim() === '' ? DEFAULT_MESSAGE : message.replace(/\s+$/, '');
    const dir = this.directory(workspace);
    const tree = await writeSnapshotTree(dir, this.records, workspace, workspace.manifestEntries());
    for (let attempt = 1; ; attempt += 1) {
      const parent = branchHead(dir.files);
      const now = new Date();
      const signature = { ...AUTHOR, timestamp: Math.floor(now.getTime() / 1000), timezoneOffset: 0 };
      const id = await writeCommit({
        fs: dir.fs,
        gitdir: dir.gitdir,
        commit: {
          message: `${text}\n`,
          tree,
          parent: parent === undefined ? [] : [parent],
          author: signature,
          committer: signature,
        },
      });
      const row: CheckpointRow = { id, message: text, createdAt: now.toISOString() };
      const moved = this.db.transaction(
        () => moveBranch(dir.files, parent, id) && (this.records.addCheckpoint(workspace.uid, row), true),
      );
      if (moved) return { id, createdAt: row.createdAt };
      if (attempt >= MAX_ATTEMPTS)
        throw new ToolError('conflict', 'Other checkpoints of this workspace kept landing first; retry.');
    }
  }

  /** Newest first. */
  list(workspace: Workspace, limit = 1000): CheckpointRow[] {
    return this.records.checkpoints(workspace.uid, limit);
  }

  /** The diff from checkpoint `from` to checkpoint `to`, or to the workspace as it is now. */
  async diff(workspace: Workspace, from: string, to?: string): Promise<string> {
    const dir = this.directory(workspace);
    const fromTree = await commitTree(dir, this.find(workspace, from).id);
    if (to === undefined) return diffToWorkspace(dir, this.records, workspace, fromTree);
    return diffBetweenTrees(dir, this.records, workspace, fromTree, await commitTree(dir, this.find(workspace, to).id));
  }

  /** Makes the workspace equal the checkpoint in one commit; `version` is null when it already did. */
  async restore(workspace: Workspace, checkpoint: string): Promise<{ restored: string; version: number | null }> {
    const { id } = this.find(workspace, checkpoint);
    const dir = this.directory(workspace);
    const items = await listTree(dir, await commitTree(dir, id));
    for (let attempt = 1; ; attempt += 1) {
      const changes = await planRestore(dir, this.records, workspace, items);
      if (changes.length === 0) return { restored: id, version: null };
      try {
        return { restored: id, version: (await workspace.commit(changes)).version };
      } catch (error) {
        // A write landed between our plan and our commit: plan again against what is there now.
        const raced =
          isToolError(error) &&
          (error.code === 'conflict' || error.code === 'already_exists' || error.code === 'not_found');
        if (!raced || attempt >= MAX_ATTEMPTS) throw error;
      }
    }
  }

  /** Fills an empty workspace from a git remote, then checkpoints it as "import <url>@<ref>". */
  async import(workspace: Workspace, source: GitSource): Promise<ImportResult & { checkpoint: Checkpoint }> {
    const imported = await importRepository(
      this.directory(workspace),
      this.records,
      workspace,
      source,
      this.options.limits,
      this.options.egress ?? noEgress,
    );
    const checkpoint = await this.checkpoint(workspace, `import ${imported.url}@${imported.ref}`);
    return { ...imported, checkpoint };
  }

  /** The automatic checkpoint after a successful apply_patch, where the workspace asks for one; a failure is logged, never the call's. */
  readonly afterCall = async (call: CompletedCall): Promise<void> => {
    if (
      call.tool !== 'apply_patch' ||
      !call.workspace.autoCheckpoint ||
      (call.args as { dryRun?: boolean }).dryRun === true
    )
      return;
    const summary = (call.result as { summary?: unknown }).summary;
    try {
      await this.checkpoint(
        call.workspace,
        typeof summary === 'string' && summary !== '' ? `apply_patch\n\n${summary}` : 'apply_patch',
      );
    } catch (error) {
      (this.options.log ?? consoleLog)(`could not checkpoint workspace ${call.workspace.id} after apply_patch`, error);
    }
  };

  private find(workspace: Workspace, id: unknown): CheckpointRow {
    if (typeof id !== 'string' || !CHECKPOINT_ID.test(id)) {
      throw new ToolError(
        'invalid_argument',
        `A checkpoint id is 40 lowercase hex digits, as POST /checkpoints answers; ${JSON.stringify(id)} is not one.`,
        { checkpoint: id },
      );
    }
    const row = this.records.checkpoint(workspace.uid, id);
    if (!row)
      throw new ToolError(
        'not_found',
        `Checkpoint ${id} does not exist in workspace ${workspace.id}; list them with GET /v1/workspaces/${workspace.id}/checkpoints.`,
        { checkpoint: id },
      );
    return row;
  }

  private directory(workspace: Workspace): GitDirectory {
    return openGitDirectory(this.db, this.objects, workspace);
  }
}
