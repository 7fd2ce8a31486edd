// `npm start` with TOOLGATE_S3_* set keeps file contents in S3 (a real s3rver on loopback).
import { readdirSync } from 'node:fs';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, removeDir, startServer, type ServerProcess } from '../support/server-process.ts';
import { s3rverClient, startS3rver, type RunningS3rver } from '../support/s3rver.ts';

let s3: RunningS3rver;
const dataDir = makeDataDir();

beforeAll(async () => {
  s3 = await startS3rver('toolgate-home');
});

afterAll(async () => {
  await s3.stop();
  removeDir(dataDir);
});

function s3Env(): Record<string, string> {
  return {
    TOOLGATE_S3_ENDPOINT: s3.endpoint,
    TOOLGATE_S3_BUCKET: s3.bucket,
    TOOLGATE_S3_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
  };
}

async function bucketKeys(): Promise<string[]> {
  const listing = await s3rverClient(s3.endpoint).send(new ListObjectsV2Command({ Bucket: s3.bucket }));
  return (listing.Contents ?? []).map((object) => object.Key!);
}

describe('the Node home with S3 blobs', () => {
  it('stores contents in the bucket, reads them back after a restart, and removes them with the workspace', async () => {
    let server: ServerProcess = await startServer({ dataDir, env: s3Env() });
    expect(server.output()).toContain('blobs in S3');
    await server.call('PUT', '/v1/workspaces/s3ws');
    const written = await server.call('POST', '/v1/workspaces/s3ws/tools/write_file', {
      path: 'src/main.ts',
      content: 'export {};\n',
    });
    expect(written.status).toBe(200);
    expect((await bucketKeys()).some((key) => key.includes('/blobs/'))).toBe(true);
    expect(readdirSync(dataDir)).not.toContain('blobs');
    await server.stop();

    server = await startServer({ dataDir, env: s3Env() });
    try {
      const read = await server.call('POST', '/v1/workspaces/s3ws/tools/read_file', { path: 'src/main.ts' });
      expect(read.body.result).toMatchObject({ content: 'export {};\n', version: written.body.result.version });
      expect((await server.call('DELETE', '/v1/workspaces/s3ws')).status).toBe(204);
      expect(await bucketKeys()).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});
