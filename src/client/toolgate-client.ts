// ToolgateClient: typed calls of the HTTP contract over fetch, for Node, browsers and Workers alike.
import type {
  ApprovalDecision,
  ApprovalList,
  ApprovalQuery,
  Approval,
  Checkpoint,
  CheckpointList,
  CreatedKey,
  GitImportSource,
  Hook,
  HookSettings,
  ImportAnswer,
  KeyList,
  NewKeyBody,
  RestoreAnswer,
  ToolFormat,
  ToolListing,
  UsageQuery,
  UsageReport,
} from './api-types.ts';
import { expectEmpty, expectJson, readJson, unexpected } from './answers.ts';
import { ToolgateError } from './toolgate-error.ts';
import { segment, ServerConnection } from './server-connection.ts';
import { WorkspaceClient } from './workspace-client.ts';
import { followProcessLog, type FollowLogsOptions, type LogChunk } from './log-follow.ts';
import type {
  ApplyPatchArgs,
  ApplyPatchResult,
  BashAction,
  BashStatusResult,
  BashArgs,
  BashResults,
  GlobArgs,
  GrepArgsFor,
  GrepOutputMode,
  GrepResults,
  ReadFileArgs,
  ReadFileResult,
  SearchPathsResult,
  ToolAnswer,
  ToolCallOptions,
  ToolName,
  ToolSignatures,
  WriteFileArgs,
  WriteFileResult,
} from './tool-types.ts';

export interface ToolgateClientOptions {
  /** The server's base URL, e.g. http://127.0.0.1:8787 (without /v1). */
  url: string;
  /** An API key, sent as `Authorization: Bearer <key>`. */
  key?: string;
  /** The fetch to use (default: the global one), e.g. a Worker's service binding. */
  fetch?: typeof fetch;
}

export class ToolgateClient extends WorkspaceClient {
  readonly url: string;
  readonly #server: ServerConnection;

  constructor(options: ToolgateClientOptions) {
    const url = options.url.replace(/\/+$/, '');
    const server = new ServerConnection(url, options.key, options.fetch);
    super(server);
    this.url = url;
    this.#server = server;
  }

  // Tools: each answers `{ result }` or `{ approval }` (see ToolAnswer) and throws ToolgateError otherwise.

  readFile(workspace: string, args: ReadFileArgs, options?: ToolCallOptions): Promise<ToolAnswer<ReadFileResult>> {
    return this.callTool(workspace, 'read_file', args, options);
  }

  writeFile(workspace: string, args: WriteFileArgs, options?: ToolCallOptions): Promise<ToolAnswer<WriteFileResult>> {
    return this.callTool(workspace, 'write_file', args, options);
  }

  applyPatch(
    workspace: string,
    args: ApplyPatchArgs,
    options?: ToolCallOptions,
  ): Promise<ToolAnswer<ApplyPatchResult>> {
    return this.callTool(workspace, 'apply_patch', args, options);
  }

  bash<Action extends BashAction>(
    workspace: string,
    args: BashArgs<Action>,
    options?: ToolCallOptions,
  ): Promise<ToolAnswer<BashResults[Action]>> {
    return this.callTool(workspace, 'bash', args, options) as Promise<ToolAnswer<BashResults[Action]>>;
  }

  /** Searches file contents (RE2 syntax, ripgrep's rules); the result's shape follows `outputMode`. */
  grep<Mode extends GrepOutputMode = 'files_with_matches'>(
    workspace: string,
    args: GrepArgsFor<Mode>,
    options?: ToolCallOptions,
  ): Promise<ToolAnswer<GrepResults[Mode]>> {
    return this.callTool(workspace, 'grep', args, options) as Promise<ToolAnswer<GrepResults[Mode]>>;
  }

  /** Lists the files whose paths match a glob, as ripgrep --files -g does. */
  glob(workspace: string, args: GlobArgs, options?: ToolCallOptions): Promise<ToolAnswer<SearchPathsResult>> {
    return this.callTool(workspace, 'glob', args, options);
  }

  /** Calls a tool by its route name; any name is sent, so a server's newer tools are reachable too. */
  callTool<Name extends ToolName>(
    workspace: string,
    tool: Name,
    args: ToolSignatures[Name]['args'],
    options?: ToolCallOptions,
  ): Promise<ToolAnswer<ToolSignatures[Name]['result']>>;
  callTool(workspace: string, tool: string, args: unknown, options?: ToolCallOptions): Promise<ToolAnswer<unknown>>;
  async callTool(
    workspace: string,
    tool: string,
    args: unknown,
    options: ToolCallOptions = {},
  ): Promise<ToolAnswer<unknown>> {
    const response = await this.#server.send('POST', `/v1/workspaces/${segment(workspace)}/tools/${segment(tool)}`, {
      query: { waitMs: options.waitMs },
      body: args,
      signal: options.signal,
    });
    if (response.status === 200 || response.status === 202) {
      const field = response.status === 200 ? 'result' : 'approval';
      const body = await readJson(response);
      if (typeof body === 'object' && body !== null && field in body) return body as ToolAnswer<unknown>;
      throw unexpected(response, body, `a tool call answered ${response.status} without "${field}"`);
    }
    throw await ToolgateError.fromResponse(response);
  }

  // History: checkpoints, diff, restore, import.

  async createCheckpoint(workspace: string, message?: string): Promise<Checkpoint> {
    return expectJson(
      await this.#server.send('POST', `/v1/workspaces/${segment(workspace)}/checkpoints`, {
        body: message === undefined ? {} : { message },
      }),
      [201],
    );
  }

  async listCheckpoints(workspace: string): Promise<CheckpointList> {
    return expectJson(await this.#server.send('GET', `/v1/workspaces/${segment(workspace)}/checkpoints`), [200]);
  }

  /** The unified diff from a checkpoint to the workspace as it is now, or to checkpoint `to`. */
  async diff(workspace: string, from: string, to?: string): Promise<{ diff: string }> {
    const query = to === undefined ? { from } : { from, to };
    return expectJson(await this.#server.send('GET', `/v1/workspaces/${segment(workspace)}/diff`, { query }), [200]);
  }

  async restore(workspace: string, checkpoint: string): Promise<RestoreAnswer> {
    return expectJson(
      await this.#server.send('POST', `/v1/workspaces/${segment(workspace)}/restore`, { body: { checkpoint } }),
      [200],
    );
  }

  /** Fills an empty workspace from a git remote. */
  async importGit(workspace: string, git: GitImportSource): Promise<ImportAnswer> {
    return expectJson(
      await this.#server.send('POST', `/v1/workspaces/${segment(workspace)}/import`, { body: { git } }),
      [201],
    );
  }

  // Webhooks (configuring one needs an admin key; deliveries are signed, not sent with a key).

  async putHook(id: string, settings: HookSettings): Promise<Hook> {
    return expectJson(await this.#server.send('PUT', `/v1/hooks/${segment(id)}`, { body: settings }), [200, 201]);
  }

  async listHooks(): Promise<{ hooks: Hook[] }> {
    return expectJson(await this.#server.send('GET', '/v1/hooks'), [200]);
  }

  async getHook(id: string): Promise<Hook> {
    return expectJson(await this.#server.send('GET', `/v1/hooks/${segment(id)}`), [200]);
  }

  async deleteHook(id: string): Promise<void> {
    await expectEmpty(await this.#server.send('DELETE', `/v1/hooks/${segment(id)}`));
  }

  // Keys (creating and revoking them needs an admin key).

  async createKey(body: NewKeyBody): Promise<CreatedKey> {
    return expectJson(await this.#server.send('POST', '/v1/keys', { body }), [201]);
  }

  async listKeys(): Promise<KeyList> {
    return expectJson(await this.#server.send('GET', '/v1/keys'), [200]);
  }

  async revokeKey(id: string): Promise<void> {
    await expectEmpty(await this.#server.send('DELETE', `/v1/keys/${segment(id)}`));
  }

  // Approvals (deciding needs an approver or admin key).

  async listApprovals(query: ApprovalQuery = {}): Promise<ApprovalList> {
    return expectJson(
      await this.#server.send('GET', '/v1/approvals', { query: { status: query.status, limit: query.limit } }),
      [200],
    );
  }

  async getApproval(id: string): Promise<Approval> {
    return expectJson(await this.#server.send('GET', `/v1/approvals/${segment(id)}`), [200]);
  }

  async decideApproval(id: string, decision: ApprovalDecision): Promise<Approval> {
    return expectJson(
      await this.#server.send('POST', `/v1/approvals/${segment(id)}/decision`, { body: decision }),
      [200],
    );
  }

  // Event streams.

  /**
   * A process's output as it writes it (the log stream): `for await (const chunk of
   * client.followLogs(ws, id))` gets each `{ data, offset }`; the iteration's return value is the
   * exit snapshot. A dropped connection resumes from the last chunk, so every character comes once.
   */
  followLogs(
    workspace: string,
    processId: string,
    options: FollowLogsOptions = {},
  ): AsyncGenerator<LogChunk, BashStatusResult, undefined> {
    const path = `/v1/workspaces/${segment(workspace)}/processes/${segment(processId)}/logs/stream`;
    return followProcessLog(
      (lastEventId) =>
        this.#server.send('GET', path, {
          query: { offset: options.offset },
          headers: lastEventId === undefined ? {} : { 'last-event-id': lastEventId },
          signal: options.signal,
        }),
      options.signal,
    );
  }

  // Usage and tool listings.

  async usage(query: UsageQuery = {}): Promise<UsageReport> {
    const time = (value: UsageQuery['from']) => (value instanceof Date ? value.toISOString() : value);
    return expectJson(
      await this.#server.send('GET', '/v1/usage', {
        query: { from: time(query.from), to: time(query.to), groupBy: query.groupBy, keyId: query.keyId },
      }),
      [200],
    );
  }

  async listTools<Format extends ToolFormat = 'jsonschema'>(format?: Format): Promise<ToolListing<Format>> {
    return expectJson(await this.#server.send('GET', '/v1/tools', { query: { format } }), [200]);
  }

  /** GET /healthz: resolves once the server takes tool calls. */
  async health(): Promise<{ ok: true }> {
    return expectJson(await this.#server.send('GET', '/healthz'), [200]);
  }
}
