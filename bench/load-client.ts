// A load client run as its own process: keeps N keep-alive connections busy for a while, reports latencies.
import { Agent, request } from 'node:http';

export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  durationMs: number;
}

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  latenciesMs: number[];
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: spec.connections });
  const url = new URL(spec.url);
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + spec.durationMs;
  const one = () =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      const req = request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          method: spec.method,
          headers: spec.headers,
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
      req.end(spec.body);
    });
  await Promise.all(
    Array.from({ length: spec.connections }, async () => {
      while (performance.now() < deadline) await one();
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
