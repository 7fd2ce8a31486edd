// A load client run as its own process: keeps N keep-alive connections busy for a while, reports latencies.
import { Agent, request } from 'node:http';

export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  durationMs: number;
  /** Load sent first in the same process and not counted, so the client's code is warm too (default 0). */
  warmupMs?: number;
  /**
   * Send exactly this many requests, shared by the connections, and stop: each request's body is `body`
   * with `{i}` replaced by its index and `{i%N}` by its index modulo N. durationMs then only caps the run.
   */
  count?: number;
  /**
   * Paths and keys taken in turn instead of the url's path and `headers`' authorization (P7b: many
   * keys over many workspaces): request n takes path n mod P and key (n + n div P) mod K, so every
   * key meets every path.
   */
  grid?: { paths: string[]; secrets: string[] };
}

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  latenciesMs: number[];
}

/** `body` for request `index` of a counted run: `{i}` and `{i%N}` filled in. */
export function bodyFor(body: string | undefined, index: number): string | undefined {
  return body?.replace(/\{i(?:%(\d+))?\}/g, (_, modulo?: string) =>
    String(modulo === undefined ? index : index % Number(modulo)),
  );
}

/** Request n's path and headers in a grid of paths and keys (see LoadSpec.grid). */
function gridTarget(
  grid: { paths: string[]; secrets: string[] },
  headers: Record<string, string>,
  n: number,
): { path: string; headers: Record<string, string> } {
  const path = grid.paths[n % grid.paths.length]!;
  const secret = grid.secrets[(n + Math.floor(n / grid.paths.length)) % grid.secrets.length]!;
  return { path, headers: { ...headers, authorization: `Bearer ${secret}` } };
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  if (spec.warmupMs) await measure({ ...spec, durationMs: spec.warmupMs, count: undefined });
  return measure(spec);
}

async function measure(spec: LoadSpec): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: spec.connections });
  const url = new URL(spec.url);
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  const deadline = started + spec.durationMs;
  let sent = 0;
  const one = (body: string | undefined) =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      const target = spec.grid && gridTarget(spec.grid, spec.headers, sent++);
      const req = request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          path: target?.path ?? url.pathname + url.search,
          method: spec.method,
          headers: target?.headers ?? spec.headers,
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) latencies.push(performance.now() - t0);
            else errors += 1;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors += 1;
        resolve();
      });
      req.end(body);
    });
  await Promise.all(
    Array.from({ length: spec.connections }, async () => {
      while (performance.now() < deadline) {
        if (spec.count === undefined) await one(spec.body);
        else if (next < spec.count) await one(bodyFor(spec.body, next++));
        else break;
      }
    }),
  );
  agent.destroy();
  return { requests: latencies.length, errors, seconds: (performance.now() - started) / 1000, latenciesMs: latencies };
}

if (process.argv[2] === '--child') {
  const spec = JSON.parse(process.argv[3]!) as LoadSpec;
  runLoad(spec).then((result) => {
    process.stdout.write(JSON.stringify(result));
  });
}
