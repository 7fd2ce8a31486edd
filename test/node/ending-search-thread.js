// A search thread that ends when asked to search for `end this thread`, as a thread that fails
// outside any search does; any other search it answers as the real thread does.
import { parentPort } from 'node:worker_threads';

// After the real thread's listener, which then has every message too.
await import('../../src/node/search-thread-entry.js');
parentPort.on('message', (job) => {
  if (job.request.pattern === 'end this thread') process.exit(70);
});
