// P10: write_file of 5,000 files of 1 KiB at distinct paths, 16 in flight, over HTTP REST.
import type { Workspaces } from '../src/workspace/workspaces.ts';
import { describe, load, perSecond, row } from './common.ts';
import type { LoadResult } from './load-client.ts';

const FILES = 5000;
const ONE_KIB = 'y'.repeat(1023) + '\n';
const TARGET_FILES_PER_SECOND = 3000;

/** `bare16` answers the bare route's req/s at 16 connections, measured in the same run. */
export async function benchWrite(
  url: string,
  key: string,
  workspaces: Workspaces,
  bare16: () => Promise<LoadResult>,
): Promise<void> {
  console.log(
    `\n# P10: write_file of ${FILES.toLocaleString('en')} x 1 KiB files at distinct paths, 16 in flight (REST)`,
  );
  const spec = (workspace: string, count: number) => ({
    url: `${url}/v1/workspaces/${workspace}/tools/write_file`,
    method: 'POST' as const,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    // {i} and {i%50} are filled in per request by the load client: w/d7/f1207.txt and so on.
    body: JSON.stringify({ path: 'w/d{i%50}/f{i}.txt', content: ONE_KIB }),
    connections: 16,
    count,
    durationMs: 300_000,
  });
  // Warm-up in a workspace of its own, so the measured one starts empty.
  workspaces.create('bench-write-warmup');
  await load(spec('bench-write-warmup', 500));
  workspaces.create('bench-write');
  const writes = await load(spec('bench-write', FILES));
  const files = workspaces.info('bench-write')?.files;
  if (writes.requests !== FILES || files !== FILES)
    throw new Error(
      `P10 wrote ${writes.requests} of ${FILES} files (${writes.errors} errors); the workspace has ${files}`,
    );
  const bare = await bare16();
  const filesPerSecond = perSecond(writes);
  console.log(`write_file : ${describe(writes, 'files/s')}, ${writes.seconds.toFixed(2)} s for ${FILES} files`);
  console.log(`bare route : ${describe(bare)} (the P1a baseline)`);
  const met = filesPerSecond >= TARGET_FILES_PER_SECOND;
  row(
    'P10',
    `write_file ${filesPerSecond.toFixed(0)} files/s (target >= ${TARGET_FILES_PER_SECOND} files/s: ${met ? 'met' : 'NOT met'}); ` +
      `${(filesPerSecond / perSecond(bare)).toFixed(2)}x the bare route's req/s at 16 connections`,
  );
}
