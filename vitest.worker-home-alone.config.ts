// The worker-home files that must run with no other wrangler dev beside them (see
// `aloneOnWorkerHome`), one at a time, after the others.
import { defineConfig } from 'vitest/config';
import workerHome, { aloneOnWorkerHome } from './vitest.worker-home.config.ts';

export default defineConfig({
  test: { ...workerHome.test, include: aloneOnWorkerHome, exclude: [], maxWorkers: 1 },
});
