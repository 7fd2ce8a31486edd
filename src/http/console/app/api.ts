// The console's only way out: calls to this origin's /v1 API with the signed-in key, errors as the contract spells them.

/** An answer that was not a 2xx, with the contract's error code and message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface Api {
  get<T>(path: string, query?: Record<string, string | number | undefined>): Promise<T>;
  send<T>(method: 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T>;
  /** A tool call on a workspace: the result of a 200, or the approval of a 202. */
  tool<T>(workspace: string, tool: string, args: unknown): Promise<ToolAnswer<T>>;
  /** Opens a streaming GET (Server-Sent Events) and answers its response once the headers arrived. */
  open(path: string, headers: Record<string, string>, signal: AbortSignal): Promise<Response>;
}

export type ToolAnswer<T> = { result: T; approval?: undefined } | { result?: undefined; approval: Approval };

export interface Approval {
  id: string;
  status: 'pending' | 'approved' | 'rejected' | 'expired' | string;
  tool: string;
  action?: string;
  arguments: unknown;
  workspace: string;
  keyId: string;
  /** The name of the key that asked (approvals made before servers recorded it have none). */
  keyName?: string;
  createdAt: string;
  decidedAt?: string;
  decidedBy?: string | null;
  reason?: string | null;
  error?: { code: string; message: string };
}

export interface KeyInfo {
  id: string;
  name: string;
  role: 'agent' | 'approver' | 'admin' | 'runner';
  workspaces: string[];
}

export function workspacePath(workspace: string, rest = ''): string {
  return `/v1/workspaces/${encodeURIComponent(workspace)}${rest}`;
}

export function createApi(key: string): Api {
  const headers = (more: Record<string, string> = {}) => ({ authorization: `Bearer ${key}`, ...more });

  async function call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const init: RequestInit = { method, headers: headers() };
    if (body !== undefined) {
      init.headers = headers({ 'content-type': 'application/json' });
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    const text = await response.text();
    const parsed: unknown = text === '' ? undefined : safeJson(text);
    if (!response.ok) throw toError(response.status, parsed);
    return { status: response.status, body: parsed as T };
  }

  return {
    async get<T>(path: string, query: Record<string, string | number | undefined> = {}) {
      const search = new URLSearchParams();
      for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, String(value));
      const tail = search.toString();
      return (await call<T>('GET', tail === '' ? path : `${path}?${tail}`)).body;
    },
    async send<T>(method: 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown) {
      return (await call<T>(method, path, body)).body;
    },
    async tool<T>(workspace: string, tool: string, args: unknown) {
      const answer = await call<{ result?: T; approval?: Approval }>(
        'POST',
        workspacePath(workspace, `/tools/${encodeURIComponent(tool)}`),
        args,
      );
      if (answer.status === 202 && answer.body.approval) return { approval: answer.body.approval };
      return { result: answer.body.result as T };
    },
    async open(path: string, more: Record<string, string>, signal: AbortSignal) {
      const response = await fetch(path, { headers: headers({ accept: 'text/event-stream', ...more }), signal });
      if (!response.ok) throw toError(response.status, safeJson(await response.text()));
      return response;
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function toError(status: number, body: unknown): ApiError {
  const error = (body as { error?: { code?: string; message?: string; details?: unknown } } | undefined)?.error;
  return new ApiError(
    status,
    error?.code ?? 'internal',
    error?.message ?? `The server answered ${status} without an error body.`,
    error?.details,
  );
}

/** What to show for a failure: the contract's message, or the browser's. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}
