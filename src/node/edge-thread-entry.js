// Starts an edge thread: loads edge-thread.ts through tsx, since on Node 20 a worker gets none of the
// TypeScript hooks its parent registered; tsImport keeps tsx's hooks to this import where a newer Node does.
import { tsImport } from 'tsx/esm/api';

await tsImport('./edge-thread.ts', import.meta.url);
