// The runner side of the runner protocol: typed calls to a toolgate server (Node or Worker) over HTTP.
import type { ProcessRequest } from '../processes/process-record.ts';

export interface LeasedJob extends ProcessRequest {
  processId: string;
  token: number;
  leaseMs: number;
  /** The workspace's version when the job was leased (null when the workspace is gone). */
  workspaceVersion: number | null;
  /** The latest characters of output the server keeps. */
  outputChars: number;
}

export interface ManifestRow {
  path: string;
  type: 'file' | 'dir' | 'symlink';
  blob: string | null;
  target: string | null;
  size: number;
  version: number;
}

export type SyncChange =
  | { op: 'write'; path: string; contentBase64: string; baseVersion: number | null }
  | { op: 'symlink'; path: string; target: string; baseVersion: number | null }
  | { op: 'mkdir'; path: string }
  | { op: 'delete'; path: string; baseVersion: number };

export interface SyncAnswer {
  committed: string[];
  /** The committed paths that still exist, as they now stand. */
  entries: ManifestRow[];
  /** The workspace version the commit created, or null when nothing was committed. */
  version: number | null;
  conflicts: string[];
  skipped: { path: string; reason: string }[];
}

export interface ExitReport {
  exitCode: number | null;
  status: 'exited' | 'stopped' | 'failed';
  timedOut?: boolean;
  error?: string;
  conflicts?: string[];
  stdout?: string;
  stderr?: string;
  truncated?: boolean;
}

/** The server no longer lets this runner report on the job (its token is stale): abandon it. */
export class StaleLeaseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StaleLeaseError';
  }
}

/** How long a report is retried while the server is unreachable (a restart, say) before it is given up. */
const RETRY_FOR_MS = 120_000;

export class RunnerClient {
  constructor(
    private readonly url: string,
    private readonly key: string,
    private readonly retryForMs = RETRY_FOR_MS,
  ) {}

  /** The next job, waiting up to `waitMs` for one; undefined when none came. */
  async lease(runnerId: string, waitMs: number, signal?: AbortSignal): Promise<LeasedJob | undefined> {
    const response = await this.send('POST', '/v1/runner/lease', { runnerId, waitMs }, signal);
    if (response.status === 204) return undefined;
    return ((await response.json()) as { job: LeasedJob }).job;
  }

  async manifest(workspace: string): Promise<{ version: number; entries: ManifestRow[] }> {
    const response = await this.send('GET', `/v1/runner/workspaces/${encodeURIComponent(workspace)}/manifest`);
    return (await response.json()) as { version: number; entries: ManifestRow[] };
  }

  async blob(workspace: string, hash: string): Promise<Uint8Array> {
    const response = await this.send('GET', `/v1/runner/workspaces/${encodeURIComponent(workspace)}/blobs/${hash}`);
    return new Uint8Array(await response.arrayBuffer());
  }

  /** Several blobs in one request (the caller keeps a batch to a few MiB). */
  async blobs(workspace: string, hashes: string[]): Promise<Map<string, Uint8Array>> {
    const response = await this.send('POST', `/v1/runner/workspaces/${encodeURIComponent(workspace)}/blobs`, { hashes });
    const { blobs } = (await response.json()) as { blobs: Record<string, string> };
    return new Map(Object.entries(blobs).map(([hash, base64]) => [hash, fromBase64(base64)]));
  }

  async started(processId: string, token: number, pid: number): Promise<void> {
    await this.send('POST', `/v1/runner/processes/${processId}/started`, { token, pid });
  }

  /** A batch of output at `offset`; `skipped` characters before it were produced but are not sent. */
  async output(processId: string, token: number, data: string, offset: number, skipped = 0): Promise<void> {
    await this.send('POST', `/v1/runner/processes/${processId}/output`, skipped > 0 ? { token, data, offset, skipped } : { token, data, offset });
  }

  async heartbeat(processId: string, token: number): Promise<{ stdin: { data: string; eof: boolean }[]; stop: { graceMs: number } | null }> {
    const response = await this.send('POST', `/v1/runner/processes/${processId}/heartbeat`, { token });
    return (await response.json()) as { stdin: { data: string; eof: boolean }[]; stop: { graceMs: number } | null };
  }

  async sync(processId: string, token: number, changes: SyncChange[]): Promise<SyncAnswer> {
    const response = await this.send('POST', `/v1/runner/processes/${processId}/sync`, { token, changes });
    return (await response.json()) as SyncAnswer;
  }

  async exit(processId: string, token: number, report: ExitReport): Promise<void> {
    await this.send('POST', `/v1/runner/processes/${processId}/exit`, { token, ...report });
  }

  /**
   * One call. Reports are idempotent (output carries its offset, a repeated exit answers as the first),
   * so a call that could not reach the server, or found it unavailable, is retried with backoff;
   * a lease is not (the lease loop itself retries).
   */
  private async send(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.key}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const init: RequestInit = { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal };
    const retrying = !path.endsWith('/lease');
    const deadline = Date.now() + this.retryForMs;
    let response: Response;
    for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
      try {
        response = await fetch(this.url + path, init);
        if (!retrying || ![502, 503, 504].includes(response.status) || Date.now() + delay > deadline) break;
        await response.body?.cancel();
      } catch (error) {
        if (!retrying || signal?.aborted || Date.now() + delay > deadline) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
    if (response.ok) return response;
    const text = await response.text();
    const code = (() => {
      try {
        return (JSON.parse(text) as { error?: { code?: string } }).error?.code;
      } catch {
        return undefined;
      }
    })();
    if (response.status === 409 && code === 'conflict') throw new StaleLeaseError(text);
    throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 500)}`);
  }
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
