// A failed test prints what each server it had running wrote meanwhile, so a failure seen only in
// CI (a 503 from an object, say) carries the server's own account of it.
import { beforeEach } from 'vitest';
import { runningServers } from './running-servers.ts';

/** At most this much of each server's output is printed: the end of it, where the failure is. */
const PRINTED_CHARS = 20_000;

beforeEach((context) => {
  const from = new Map([...runningServers].map((server) => [server, server.output().length]));
  context.onTestFailed(() => {
    for (const server of runningServers) {
      const written = server.output().slice(from.get(server) ?? 0);
      if (written === '') continue;
      const shown = written.length > PRINTED_CHARS ? `…${written.slice(-PRINTED_CHARS)}` : written;
      console.error(`--- what the server at ${server.url} wrote during "${context.task.name}":\n${shown}`);
    }
  });
});
