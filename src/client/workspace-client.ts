// The workspace calls ToolgateClient inherits: create, describe, fork, delete, list files, download and upload archives.
import type {
  ArchiveApplied,
  ArchiveDownloadOptions,
  ArchiveUploadOptions,
  FileListing,
  ListFilesQuery,
  PutWorkspaceAnswer,
  WorkspaceInfo,
  WorkspaceSettings,
} from './api-types.ts';
import { expectEmpty, expectJson } from './answers.ts';
import { segment, type RawBody, type ServerConnection } from './server-connection.ts';
import { ToolgateError } from './toolgate-error.ts';

export class WorkspaceClient {
  readonly #server: ServerConnection;

  protected constructor(server: ServerConnection) {
    this.#server = server;
  }

  async putWorkspace(workspace: string, settings?: WorkspaceSettings): Promise<PutWorkspaceAnswer> {
    const response = await this.#server.send('PUT', `/v1/workspaces/${segment(workspace)}`, { body: settings });
    const info = await expectJson<WorkspaceInfo>(response, [200, 201]);
    return { created: response.status === 201, workspace: info };
  }

  async getWorkspace(workspace: string): Promise<WorkspaceInfo> {
    return expectJson(await this.#server.send('GET', `/v1/workspaces/${segment(workspace)}`), [200]);
  }

  /** A new workspace `to` with the files, links, settings and checkpoints of `workspace`, sharing its contents. */
  async fork(workspace: string, to: string): Promise<WorkspaceInfo> {
    return expectJson(
      await this.#server.send('POST', `/v1/workspaces/${segment(workspace)}/fork`, { body: { to } }),
      [201],
    );
  }

  async deleteWorkspace(workspace: string): Promise<void> {
    await expectEmpty(await this.#server.send('DELETE', `/v1/workspaces/${segment(workspace)}`));
  }

  async listFiles(workspace: string, query: ListFilesQuery = {}): Promise<FileListing> {
    return expectJson(
      await this.#server.send('GET', `/v1/workspaces/${segment(workspace)}/files`, {
        query: { prefix: query.prefix, recursive: query.recursive, limit: query.limit, cursor: query.cursor },
      }),
      [200],
    );
  }

  /**
   * A directory of the workspace (`prefix`, default the root) as a tar, or gzip'd with `format:
   * 'tgz'`: the answer's body, streamed as the server packs it.
   */
  async download(
    workspace: string,
    options: ArchiveDownloadOptions = {},
    signal?: AbortSignal,
  ): Promise<ReadableStream<Uint8Array>> {
    const response = await this.#server.send('GET', `/v1/workspaces/${segment(workspace)}/archive`, {
      query: { format: options.format, prefix: options.prefix },
      signal,
    });
    if (response.status !== 200) throw await ToolgateError.fromResponse(response);
    return response.body ?? new Blob([]).stream();
  }

  /**
   * Applies a tar or gzip'd tar (bytes, a Blob or a stream) in one commit: under `prefix`, with
   * `mode` merge (default) or replace. A refused entry refuses the whole archive.
   */
  async upload(workspace: string, archive: RawBody, options: ArchiveUploadOptions = {}): Promise<ArchiveApplied> {
    return expectJson(
      await this.#server.send('PUT', `/v1/workspaces/${segment(workspace)}/archive`, {
        query: { mode: options.mode, prefix: options.prefix },
        raw: archive,
      }),
      [200],
    );
  }
}
