// A server killed with SIGKILL during a stream of multi-file patches: each patch is there whole or not at all.
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { callApi, makeDataDir, removeDir, startServer, type ServerProcess } from '../support/server-process.ts';

const dataDir = makeDataDir();
let restarted: ServerProcess | undefined;
afterAll(async () => {
  await restarted?.stop();
  removeDir(dataDir);
});

const FILES_PER_SET = 5;
const SETS = 4;
const fileName = (set: number, i: number) => `set${set}/file${i}.txt`;
const generationPatch = (set: number, from: number, to: number) =>
  [
    '*** Begin Patch',
    ...Array.from({ length: FILES_PER_SET }, (_, i) => [
      `*** Update File: ${fileName(set, i)}`,
      '@@',
      ` header ${i}`,
      `-generation ${from}`,
      `+generation ${to}`,
    ]).flat(),
    '*** End Patch',
  ].join('\n');

describe('crash safety of apply_patch', () => {
  it('after SIGKILL mid-stream, every file set is at one generation, no older than the last acknowledged patch', async () => {
    const server = await startServer({ dataDir });
    await server.call('PUT', '/v1/workspaces/gen');
    for (let set = 0; set < SETS; set += 1) {
      for (let i = 0; i < FILES_PER_SET; i += 1) {
        await server.call('POST', '/v1/workspaces/gen/tools/write_file', {
          path: fileName(set, i),
          content: `header ${i}\ngeneration 0\nfooter\n`,
        });
      }
    }
    const acknowledged = Array(SETS).fill(0);
    let total = 0;
    const stream = async (set: number) => {
      for (let generation = 1; ; generation += 1) {
        try {
          const answer = await callApi(server.url, server.key, 'POST', '/v1/workspaces/gen/tools/apply_patch', {
            patch: generationPatch(set, generation - 1, generation),
          });
          if (answer.status !== 200) throw new Error(`patch refused: ${JSON.stringify(answer.body)}`);
          acknowledged[set] = generation;
          total += 1;
        } catch (error) {
          if (error instanceof TypeError) return; // the connection died with the server
          throw error;
        }
      }
    };
    const streams = Array.from({ length: SETS }, (_, set) => stream(set));
    await eventually(() => total >= 120, { what: '120 patches to be acknowledged', intervalMs: 10 });
    await server.kill();
    await Promise.all(streams);
    expect(total).toBeGreaterThanOrEqual(100);

    restarted = await startServer({ dataDir });
    for (let set = 0; set < SETS; set += 1) {
      const generations = new Set<string>();
      for (let i = 0; i < FILES_PER_SET; i += 1) {
        const read = await restarted.call('POST', '/v1/workspaces/gen/tools/read_file', { path: fileName(set, i) });
        expect(read.status).toBe(200);
        generations.add(/generation (\d+)/.exec(read.body.result.content)![1]!);
      }
      expect(generations.size, `set ${set} was applied in part: ${[...generations]}`).toBe(1);
      const generation = Number([...generations][0]);
      // The patch in flight at the kill may or may not have landed, whole.
      expect(generation === acknowledged[set] || generation === acknowledged[set] + 1).toBe(true);
    }
  });
});
