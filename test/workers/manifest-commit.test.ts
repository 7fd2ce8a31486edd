// A commit of hundreds of changes on a real Durable Object's SQL, as an archive on the Cloudflare home makes:
// the rows read and written many to a statement stay within what Durable Object SQL binds.
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect, it } from 'vitest';
import { DurableObjectSqlDatabase } from '../../src/storage/durable-object-sql-database.ts';
import { MemoryObjectStore } from '../../src/storage/memory-object-store.ts';
import { Workspaces } from '../../src/workspace/workspaces.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

it('lands 500 files in 20 directories in one commit, then overwrites, deletes and adds in another', async () => {
  const stub = env.SQL_OBJECT.get(env.SQL_OBJECT.newUniqueId());
  await runInDurableObject(stub, async (_instance, state) => {
    const workspaces = new Workspaces(new DurableObjectSqlDatabase(state.storage), new MemoryObjectStore());
    workspaces.create('w');
    const workspace = workspaces.open('w');
    await workspace.commit(
      Array.from({ length: 500 }, (_, i) => ({
        op: 'write' as const,
        path: `d${i % 20}/f${i}.txt`,
        content: bytes(`${i}`),
      })),
    );
    expect(workspaces.info('w')).toMatchObject({ files: 500 });
    expect(workspace.entriesIn('')).toHaveLength(20);

    await workspace.commit([
      ...Array.from({ length: 100 }, (_, i) => ({ op: 'delete' as const, path: `d${i % 20}/f${i}.txt` })),
      ...Array.from({ length: 100 }, (_, i) => ({
        op: 'write' as const,
        path: `d${(i + 100) % 20}/f${i + 100}.txt`,
        content: bytes('changed'),
      })),
      ...Array.from({ length: 50 }, (_, i) => ({ op: 'write' as const, path: `new/g${i}.txt`, content: bytes('new') })),
    ]);
    expect(workspaces.info('w')).toMatchObject({ files: 450 });
    expect(workspace.entry('d0/f0.txt')).toBeUndefined();
    expect(workspace.entry('d0/f100.txt')).toMatchObject({ type: 'file', size: 'changed'.length });
    expect(workspace.entriesIn('new')).toHaveLength(50);
  });
});
