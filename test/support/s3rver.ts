// A real S3 API server (s3rver) on loopback in a child process, for the S3 driver's tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { S3Client } from '@aws-sdk/client-s3';

const S3RVER_PROCESS = fileURLToPath(new URL('../storage/fixtures/s3rver-process.ts', import.meta.url));

export interface RunningS3rver {
  endpoint: string;
  bucket: string;
  child: ChildProcess;
  directory: string;
  stop(): Promise<void>;
}

/** Starts s3rver with one bucket; see the fixture for why it runs in its own process. */
export async function startS3rver(bucket: string): Promise<RunningS3rver> {
  const directory = await mkdtemp(join(tmpdir(), 'toolgate-s3rver-'));
  const child = spawn(
    process.execPath,
    ['--openssl-legacy-provider', '--import', 'tsx', S3RVER_PROCESS, directory, bucket],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const [line] = (await once(createInterface({ input: child.stdout as Readable }), 'line')) as [string];
  const { port } = JSON.parse(line) as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    child,
    directory,
    async stop() {
      const exited = once(child, 'exit');
      child.stdin?.end();
      await exited;
      await rm(directory, { recursive: true, force: true });
    },
  };
}

export function s3rverClient(endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}
