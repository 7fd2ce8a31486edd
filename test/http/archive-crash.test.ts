// An archive upload answered and then a SIGKILL before the blob store moved its journal to files:
// the restarted server has every file byte-identical, and later changes to them stay (Node home).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeDataDir, startServer, stopAfterAll, testHome, type ServerProcess } from '../support/server-process.ts';
import { tarBytes } from '../support/tar-bytes.ts';

const { servers, dirs } = stopAfterAll();

/** Distinct contents, some multi-block and one empty, so every file is a blob of its own. */
const FILES = Array.from({ length: 400 }, (_, index) => ({
  path: `d${index % 9}/f${index}.txt`,
  content: index === 3 ? '' : `file ${index}\n`.repeat(1 + (index % 97)),
}));

async function start(dataDir: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const server = await startServer({ dataDir, env: { TOOLGATE_RUNNER: 'off', ...env } });
  servers.push(server);
  return server;
}

describe.skipIf(testHome === 'worker')(
  'an archive upload and a crash before its contents reach their own files',
  () => {
    it('every file is readable byte-identical after a restart; a file changed or deleted after the answer stays so', async () => {
      const dataDir = makeDataDir();
      dirs.push(dataDir);
      // The journal waits an hour before it is moved: the kill below comes while it is pending.
      const server = await start(dataDir, { TOOLGATE_BLOB_JOURNAL_MOVE_DELAY_MS: '3600000' });
      expect((await server.call('PUT', '/v1/workspaces/crash')).status).toBe(201);
      const response = await fetch(`${server.url}/v1/workspaces/crash/archive`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${server.key}` },
        body: tarBytes(FILES.map(({ path, content }) => ({ name: path, content }))),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ files: FILES.length });
      const changed = await server.call('POST', '/v1/workspaces/crash/tools/write_file', {
        path: FILES[5]!.path,
        content: 'written after the upload\n',
      });
      expect(changed.status).toBe(200);
      const deleted = await server.call('POST', '/v1/workspaces/crash/tools/apply_patch', {
        patch: `*** Begin Patch\n*** Delete File: ${FILES[6]!.path}\n*** End Patch\n`,
      });
      expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
      // What the restart finds of the upload's contents is in the journal alone.
      expect(readdirSync(join(dataDir, 'blobs')).filter((name) => name.startsWith('.journal-'))).toHaveLength(1);
      await server.kill();

      const restarted = await start(dataDir);
      expect(readdirSync(join(dataDir, 'blobs')).filter((name) => name.startsWith('.journal-'))).toEqual([]);
      for (const [index, { path, content }] of FILES.entries()) {
        const answer = await restarted.call('POST', '/v1/workspaces/crash/tools/read_file', {
          path,
          maxChars: 100_000,
        });
        const expected = index === 5 ? 'written after the upload\n' : index === 6 ? undefined : content;
        expect({ path, status: answer.status, content: answer.body.result?.content }).toEqual({
          path,
          status: index === 6 ? 404 : 200,
          content: expected,
        });
      }
    }, 120_000);
  },
);
