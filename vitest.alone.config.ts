// The Node-home files that run with no other file beside them (see `runAlone`), after the others.
import { defineConfig } from 'vitest/config';
import nodeHome, { runAlone } from './vitest.config.ts';

export default defineConfig({
  test: { ...nodeHome.test, include: runAlone, exclude: [], maxWorkers: 1 },
});
