// Composition root of the embedded default: `npm start` runs this file; `toolgate serve` calls its main().
import { readNodeConfig } from '../src/node/config.ts';
import { startNodeServer } from '../src/node/server.ts';
import { isEntryPoint } from '../src/node/entry-point.ts';

/** Starts the server from the environment's settings and prints where it listens; stops it on SIGTERM or SIGINT. */
export async function main(): Promise<void> {
  const config = readNodeConfig(process.env);
  const server = await startNodeServer(config);
  console.log(
    `toolgate listening on ${server.url} (data in ${config.dataDir}, blobs in ${server.blobs === 's3' ? 'S3' : 'the data dir'})`,
  );
  if (config.sandbox.mode === 'none')
    console.warn(
      'toolgate: WARNING: TOOLGATE_SANDBOX=none: bash commands run WITHOUT a sandbox (/healthz says "sandbox": "none")',
    );
  if (server.runner) {
    const sandbox = server.runner.sandbox.describe(config.runnerOverlay);
    if (sandbox.warning) console.warn(`toolgate: WARNING: in-process runner: ${sandbox.text}`);
    else console.log(`toolgate: in-process runner: ${sandbox.text}`);
  } else {
    console.log(
      'toolgate: no in-process runner (TOOLGATE_RUNNER=off); start runners with `TOOLGATE_RUNNER_KEY=... npx toolgate runner --url ...`',
    );
  }
  if (server.adminKey.generated) {
    console.log(`toolgate generated the first admin key (shown once; kept in ${server.adminKey.file}):`);
    console.log(`  ${server.adminKey.secret}`);
  } else if (server.adminKey.file) {
    console.log(`toolgate admin key: the one kept in ${server.adminKey.file}`);
  }
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    console.log(`toolgate: ${signal} received, closing`);
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('toolgate: error while closing', error);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

if (isEntryPoint(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(`toolgate: could not start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
