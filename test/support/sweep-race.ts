// The race both homes' blob sweepers must survive (test/http/blob-gc.test.ts on Node,
// test/workers/family-sweep.test.ts across Cloudflare's objects): lanes of writes, forks, deletes,
// checkpoints and restores over HTTP, at once, while the sweeper runs with no grace; every content a
// workspace or checkpoint reaches reads back as written. No Node imports: workerd runs it too.
import { expect } from 'vitest';

type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

export interface SweepRace {
  call: Call;
  /** The workspace every lane forks from (it exists). */
  root: string;
  /** A name for a lane's workspaces (distinct per lane and counter). */
  name: (lane: number, made: number) => string;
  rounds: number;
  lanes?: number;
  /** Distinct contents drawn per write (content `content N <tag>`). */
  contents: number;
  tag?: string;
  /** How many contents the store holds now. */
  storedContents: () => Promise<number> | number;
}

export async function raceAgainstSweeper(race: SweepRace): Promise<void> {
  const { call, root, rounds, contents, tag = '' } = race;
  const lanes = race.lanes ?? 4;
  const read = async (ws: string, path: string) => {
    const answer = await call('POST', `/v1/workspaces/${ws}/tools/read_file`, { path, maxChars: 2_000_000 });
    expect(answer.status, `${ws}/${path}: ${JSON.stringify(answer.body).slice(0, 300)}`).toBe(200);
    return answer.body.result.content as string;
  };
  // What each live workspace holds (path -> content) and its checkpoints with what they held.
  const expected = new Map<string, Map<string, string>>();
  const checkpoints = new Map<string, { id: string; files: Map<string, string> }[]>();
  const rootFiles = new Map<string, string>();
  const listing = await call('GET', `/v1/workspaces/${root}/files?recursive=true`);
  for (const entry of listing.body?.entries ?? [])
    if (entry.type === 'file') rootFiles.set(entry.path, await read(root, entry.path));
  // One family: every lane's workspaces are forks of the root, so they share one store and its contents.
  const owned: string[][] = [];
  for (let lane = 0; lane < lanes; lane++) {
    const name = race.name(lane, -1);
    const answer = await call('POST', `/v1/workspaces/${root}/fork`, { to: name });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expected.set(name, new Map(rootFiles));
    checkpoints.set(name, []);
    owned.push([name]);
  }
  // Which actions ran, so a generator that never draws some fails the test rather than skip them.
  const ran = new Set<string>();
  const written = new Set<string>();
  let made = 0;
  let reclaimed = false;
  const verify = async (names: readonly string[]) => {
    for (const ws of names)
      for (const [path, content] of expected.get(ws)!) expect(await read(ws, path), `${ws}/${path}`).toBe(content);
  };
  await Promise.all(
    owned.map(async (mine, lane) => {
      let seed = 7 + lane;
      const next = (n: number) => {
        seed = (seed * 1_103_515_245 + 12_345) >>> 0;
        // The high bits: an LCG's low bits cycle (the lowest alternates), which would leave some actions never drawn.
        return (seed >>> 16) % n;
      };
      for (let round = 0; round < rounds / lanes; round++) {
        const ws = mine[next(mine.length)]!;
        const files = expected.get(ws)!;
        const action = next(10);
        if (action < 6) {
          // Mostly new contents, now and then one another workspace dropped or still holds.
          const path = `f${next(8)}.txt`;
          const content = `content ${next(contents)} ${tag}\n`;
          const answer = await call('POST', `/v1/workspaces/${ws}/tools/write_file`, { path, content });
          expect(answer.status, JSON.stringify(answer.body)).toBe(200);
          files.set(path, content);
          written.add(content);
          ran.add('write');
        } else if (action === 6 && mine.length < 4) {
          const to = race.name(lane, made++);
          const answer = await call('POST', `/v1/workspaces/${ws}/fork`, { to });
          expect(answer.status, JSON.stringify(answer.body)).toBe(201);
          expected.set(to, new Map(files));
          checkpoints.set(to, [...checkpoints.get(ws)!]);
          mine.push(to);
          ran.add('fork');
        } else if (action === 7 && mine.length > 1) {
          expect((await call('DELETE', `/v1/workspaces/${ws}`)).status).toBe(204);
          expected.delete(ws);
          checkpoints.delete(ws);
          mine.splice(mine.indexOf(ws), 1);
          ran.add('delete');
        } else if (action === 8) {
          const answer = await call('POST', `/v1/workspaces/${ws}/checkpoints`, {});
          expect(answer.status, JSON.stringify(answer.body)).toBe(201);
          checkpoints.get(ws)!.push({ id: answer.body.id, files: new Map(files) });
          ran.add('checkpoint');
        } else {
          const saved = checkpoints.get(ws)!;
          if (saved.length === 0) continue;
          const checkpoint = saved[next(saved.length)]!;
          const answer = await call('POST', `/v1/workspaces/${ws}/restore`, { checkpoint: checkpoint.id });
          expect(answer.status, JSON.stringify(answer.body)).toBe(200);
          expected.set(ws, new Map(checkpoint.files));
          ran.add('restore');
        }
        if (round % 25 === 24) {
          await verify(mine);
          if ((await race.storedContents()) < written.size) reclaimed = true;
        }
      }
    }),
  );
  await verify([...expected.keys()]);
  // The sweeper did reclaim meanwhile: fewer contents are stored than distinct ones were written.
  expect(reclaimed).toBe(true);
  expect([...ran].sort()).toEqual(['checkpoint', 'delete', 'fork', 'restore', 'write']);
}
