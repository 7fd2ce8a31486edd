// Usage totals, approval listings and the approvals stream of one key, served in its key object: each
// asks the workspace objects in the key's scope and no other. A scope is a list of workspace ids
// (core/workspace-scope.ts), so it is its own index; only a key whose scope is every workspace (`*`)
// walks a registry, the directory's index of workspace objects.
import { maySee } from '../approvals/approval-flow.ts';
import type { Approval } from '../approvals/approval-store.ts';
import {
  directoryCalls,
  workspaceCalls,
  type ObjectCall,
  type ObjectCallAnswer,
  type ObjectCallBody,
} from '../contract/object-calls.ts';
import { WORKSPACE_ID_PATTERN } from '../contract/wire-values.ts';
import { ToolError } from '../core/errors.ts';
import { consoleLog as log } from '../core/log.ts';
import { ALL_WORKSPACES, type WorkspaceScope } from '../core/workspace-scope.ts';
import type { ApprovalDesk } from '../http/approval-routes.ts';
import type { UsageSource } from '../http/usage-routes.ts';
import type { ApiKey } from '../keys/key-store.ts';
import type { UsageQuery, UsageRow } from '../metering/usage-meter.ts';
import { callObject, directoryObject, workspaceObject, type Env } from './bindings.ts';

/** Workspace objects asked at once when a listing spans them. */
const FAN_OUT = 16;
/** How long a workspace object sends a key object its approvals' changes after being asked to. */
export const APPROVAL_WATCH_MS = 60_000;
/** While a stream is open its key object asks again this often (and so also hears of workspaces a `*` scope gained). */
const RENEW_MS = 20_000;

export class ScopedListings implements ApprovalDesk, UsageSource {
  /** The open approvals streams of this key object, each with the key it was opened with. */
  private readonly streams = new Set<{ key: ApiKey; listener: (approval: Approval) => void }>();
  private renewal: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly env: Env,
    /** Whether the key is still live, as this key object holds it. */
    private readonly live: (id: string) => Promise<boolean>,
  ) {}

  async summary(query: UsageQuery): Promise<UsageRow[]> {
    const parts = await this.ask(await this.names(query.workspaces ?? [ALL_WORKSPACES]), workspaceCalls.usage, query);
    const totals = new Map<string, UsageRow>();
    for (const row of parts.flatMap((part) => part ?? [])) {
      const total = totals.get(row.group);
      if (!total) {
        totals.set(row.group, { ...row });
        continue;
      }
      total.calls += row.calls;
      total.errors += row.errors;
      total.bytesIn += row.bytesIn;
      total.bytesOut += row.bytesOut;
      total.processSeconds = Math.round((total.processSeconds + row.processSeconds) * 1000) / 1000;
    }
    return [...totals.values()].sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0));
  }

  async listApprovals(key: ApiKey, status: Approval['status'] | undefined, limit: number): Promise<Approval[]> {
    const parts = await this.ask(await this.names(key.workspaces), workspaceCalls.approvals, { key, status, limit });
    // Newest first, as one object lists them.
    return parts
      .flatMap((part) => part ?? [])
      .sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1))
      .slice(0, limit);
  }

  /** Before a stream answers: the workspace objects in the key's scope send this object their approvals' changes. */
  async prepareWatch(key: ApiKey): Promise<void> {
    await this.subscribe(key);
  }

  watchApprovals(key: ApiKey, listener: (approval: Approval) => void): () => void {
    const entry = { key, listener };
    this.streams.add(entry);
    this.renewal ??= setInterval(() => {
      const [first] = this.streams;
      if (first)
        void this.subscribe(first.key).catch((error: unknown) => log('could not renew the approval watch', error));
    }, RENEW_MS);
    return () => {
      this.streams.delete(entry);
      if (this.streams.size === 0 && this.renewal !== undefined) {
        clearInterval(this.renewal);
        this.renewal = undefined;
      }
    };
  }

  keyLive(key: ApiKey): Promise<boolean> {
    return this.live(key.id);
  }

  /** A workspace object's approval was created or changed: each stream whose key may see it is told. Answers whether any stream is open. */
  approvalChanged(approval: Approval): boolean {
    for (const { key, listener } of [...this.streams]) if (maySee(key, approval)) listener(approval);
    return this.streams.size > 0;
  }

  /** Approval ids name their workspace; the Worker sends those to it, so what reaches here names none. */
  getApproval(_key: ApiKey, id: string): Approval {
    throw new ToolError('not_found', `Approval ${id} does not exist.`, { approvalId: id });
  }

  async decide(key: ApiKey, id: string): Promise<Approval> {
    return this.getApproval(key, id);
  }

  private async subscribe(key: ApiKey): Promise<void> {
    await this.ask(await this.names(key.workspaces), workspaceCalls.watchApprovals, {
      watcher: key.id,
      ms: APPROVAL_WATCH_MS,
    });
  }

  /** The workspace objects a scope reaches: its own ids, or for `*` every one the directory's registry holds. */
  private async names(scope: WorkspaceScope): Promise<string[]> {
    if (!scope.includes(ALL_WORKSPACES)) return [...new Set(scope)].filter((name) => WORKSPACE_ID_PATTERN.test(name));
    return (await callObject(directoryObject(this.env), directoryCalls.workspaces, {}))!.names;
  }

  /** Asks each named workspace object, a batch at a time. */
  private async ask<Call extends ObjectCall>(
    names: string[],
    call: Call,
    body: ObjectCallBody<Call>,
  ): Promise<ObjectCallAnswer<Call>[]> {
    const answers: ObjectCallAnswer<Call>[] = [];
    for (let start = 0; start < names.length; start += FAN_OUT) {
      const batch = names.slice(start, start + FAN_OUT);
      answers.push(
        ...(await Promise.all(batch.map((name) => callObject(workspaceObject(this.env, name), call, body)))),
      );
    }
    return answers;
  }
}
