// The runner side of the runner protocol: typed calls to a toolgate server (Node or Worker) over HTTP,
// or straight to the app's handler for the runner inside the server's process.
import { readBlobFrames } from '../contract/blob-frames.ts';
import type {
  BlobPieceAnswer,
  ControlReply,
  FinishReport,
  LeasedJob,
  ManifestAnswer,
  SyncAnswer,
  SyncChange,
} from '../contract/runner-protocol.ts';

/** Which job a report is about: runner reports are addressed within the job's workspace. */
export interface JobRef {
  workspace: string;
  processId: string;
}

function processPath(job: JobRef): string {
  return `/v1/runner/workspaces/${encodeURIComponent(job.workspace)}/processes/${encodeURIComponent(job.processId)}`;
}

/** The server no longer lets this runner report on the job (its token is stale): abandon it. */
export class StaleLeaseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StaleLeaseError';
  }
}

/** The server refuses this runner's key for the runner protocol (unknown, revoked, or not of role runner): leasing cannot go on. */
export class KeyRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyRefusedError';
  }
}

/** How long a report is retried while the server is unreachable (a restart, say) before it is given up. */
const RETRY_FOR_MS = 120_000;

/** How a runner's requests reach its server: `fetch` over the network, or the app itself for a runner in the server's process. */
export type RunnerTransport = (request: Request) => Promise<Response>;

/**
 * A transport that hands each request to the server's own fetch handler, in this process: the
 * same routes, keys and checks as over HTTP, without a socket or an HTTP parse either side. An
 * aborted request rejects at once, as fetch does; the handler still runs to its end and sees the
 * abort on `request.signal` (a lease long-poll then hands its job on).
 */
export function inProcessTransport(handler: (request: Request) => Response | Promise<Response>): RunnerTransport {
  return (request) => {
    const { signal } = request;
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<Response>((resolve, reject) => {
      const onAbort = () => reject(signal.reason as Error);
      signal.addEventListener('abort', onAbort, { once: true });
      Promise.resolve()
        .then(() => handler(request))
        .then(resolve, reject)
        .finally(() => signal.removeEventListener('abort', onAbort));
    });
  };
}

export class RunnerClient {
  constructor(
    private readonly url: string,
    private readonly key: string,
    private readonly retryForMs = RETRY_FOR_MS,
    /** Default: fetch over the network. */
    private readonly transport?: RunnerTransport,
  ) {}

  /** The next job, waiting up to `waitMs` for one; undefined when none came. */
  /** The next job, waiting up to `waitMs` for one; with `execOnly`, an exec job only. */
  async lease(
    runnerId: string,
    waitMs: number,
    signal?: AbortSignal,
    execOnly = false,
  ): Promise<LeasedJob | undefined> {
    const response = await this.send(
      'POST',
      '/v1/runner/lease',
      { runnerId, waitMs, ...(execOnly ? { execOnly } : {}) },
      signal,
    );
    if (response.status === 204) return undefined;
    return ((await response.json()) as { job: LeasedJob }).job;
  }

  async manifest(workspace: string): Promise<ManifestAnswer> {
    const response = await this.send('GET', `/v1/runner/workspaces/${encodeURIComponent(workspace)}/manifest`);
    return (await response.json()) as ManifestAnswer;
  }

  async blob(workspace: string, hash: string): Promise<Uint8Array> {
    const response = await this.send('GET', `/v1/runner/workspaces/${encodeURIComponent(workspace)}/blobs/${hash}`);
    return new Uint8Array(await response.arrayBuffer());
  }

  /**
   * Several blobs in one request (the caller keeps a batch to a few MiB). The answer must frame
   * every blob asked for exactly once and nothing else: a short or malformed body is an error.
   */
  async blobs(workspace: string, hashes: string[]): Promise<Map<string, Uint8Array>> {
    const path = `/v1/runner/workspaces/${encodeURIComponent(workspace)}/blobs`;
    const response = await this.send('POST', path, { hashes });
    const type = response.headers.get('content-type') ?? '';
    if (!type.startsWith('application/octet-stream')) {
      await response.body?.cancel();
      throw new Error(`POST ${path} answered ${JSON.stringify(type)}, not a binary blob batch`);
    }
    if (!response.body) throw new Error(`POST ${path} answered an empty body, not a binary blob batch`);
    return readBlobFrames(response.body, hashes, `POST ${path}`);
  }

  async started(job: JobRef, token: number, pid: number): Promise<void> {
    await this.send('POST', `${processPath(job)}/started`, { token, pid });
  }

  /**
   * A batch of output at `offset`; `skipped` characters before it were produced but are not sent.
   * The batch goes as the raw UTF-8 body (the numbers in the query), which spares encoding and
   * parsing megabytes of JSON and keeps the body at most 3 bytes a character.
   */
  async output(job: JobRef, token: number, data: string, offset: number, skipped = 0): Promise<void> {
    const query = `token=${token}&offset=${offset}${skipped > 0 ? `&skipped=${skipped}` : ''}`;
    await this.send('POST', `${processPath(job)}/output?${query}`, data);
  }

  /**
   * Renews the lease; `stdinAck` is the last stdin seq applied, so nothing in a lost reply is lost.
   * With `wait` it is the process's control request: the server holds it up to `waitMs` and answers
   * as soon as stdin or a stop (one the runner lacks, `stopAck`) is written; `signal` ends it.
   */
  async heartbeat(
    job: JobRef,
    token: number,
    stdinAck: number,
    wait?: { waitMs: number; stopAck: boolean; signal?: AbortSignal },
  ): Promise<ControlReply> {
    const body =
      wait === undefined ? { token, stdinAck } : { token, stdinAck, waitMs: wait.waitMs, stopAck: wait.stopAck };
    const response = await this.send('POST', `${processPath(job)}/heartbeat`, body, wait?.signal);
    return (await response.json()) as ControlReply;
  }

  /** One sync-back; `syncId` makes its retries safe (the server answers a repeat as it did the first). */
  async sync(job: JobRef, token: number, changes: SyncChange[], syncId: string): Promise<SyncAnswer> {
    const response = await this.send('POST', `${processPath(job)}/sync`, { token, changes, syncId });
    return (await response.json()) as SyncAnswer;
  }

  /** Small blobs in one request, framed as blob-frames.ts frames them; the server stores them all or, when one's id is wrong, none. */
  async uploadBlobs(job: JobRef, token: number, framed: Uint8Array): Promise<void> {
    await this.send('POST', `${processPath(job)}/blobs?token=${token}`, framed);
  }

  /** One piece of a blob of `size` bytes, at `offset`; the server stores the blob once the last piece is in. */
  async uploadPiece(
    job: JobRef,
    token: number,
    hash: string,
    size: number,
    offset: number,
    bytes: Uint8Array,
  ): Promise<BlobPieceAnswer> {
    const response = await this.send(
      'PUT',
      `${processPath(job)}/blobs/${hash}?token=${token}&offset=${offset}&size=${size}`,
      bytes,
    );
    return (await response.json()) as BlobPieceAnswer;
  }

  async exit(job: JobRef, token: number, report: FinishReport): Promise<void> {
    await this.send('POST', `${processPath(job)}/exit`, { token, ...report });
  }

  /**
   * One call. Reports are idempotent (output carries its offset, a repeated exit answers as the first),
   * so a call that could not reach the server, or found it unavailable, is retried with backoff;
   * a lease is not (the lease loop itself retries).
   */
  private async send(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.key}` };
    // A string body is sent as UTF-8 text, bytes as they are; anything else as JSON.
    const plain = typeof body === 'string';
    const binary = body instanceof Uint8Array;
    if (body !== undefined)
      headers['content-type'] = plain
        ? 'text/plain; charset=utf-8'
        : binary
          ? 'application/octet-stream'
          : 'application/json';
    const init: RequestInit = {
      method,
      headers,
      body:
        body === undefined
          ? undefined
          : plain || binary
            ? (body as string | Uint8Array<ArrayBuffer>)
            : JSON.stringify(body),
      signal,
    };
    const leasing = path.endsWith('/lease');
    const retrying = !leasing;
    const deadline = Date.now() + this.retryForMs;
    let response: Response;
    for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
      try {
        // Over the network the signal goes to fetch itself: one carried only by a Request object
        // can be lost (Node 20's fetch follows it weakly), and a lease long-poll then outlives its abort.
        response = await (this.transport
          ? this.transport(new Request(this.url + path, init))
          : fetch(this.url + path, init));
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
    if (leasing && (response.status === 401 || response.status === 403)) throw new KeyRefusedError(text);
    // A stale token, or a key that does not hold the job's lease: either way this runner may not go on with it.
    if ((response.status === 409 && code === 'conflict') || (response.status === 403 && code === 'forbidden'))
      throw new StaleLeaseError(text);
    throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 500)}`);
  }
}
