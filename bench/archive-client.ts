// The HTTP side of P14, run in its own process (see common.ts): one archive upload or download,
// timed from the request to the last byte of the answer, after one untimed call of the same kind.
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';

export interface ArchiveCallSpec {
  url: string;
  key: string;
  /**
   * `upload` PUTs `tarFile` to `workspace` (then `warmUpWorkspace` first, untimed); `download` GETs
   * `workspace`'s archive (twice); `paced` PUTs `tarFile` to `workspace` at about 100 Mbit/s (a
   * chunk of 64 KiB every 5 ms), timing only from its last byte sent to the answer.
   */
  kind: 'upload' | 'download' | 'paced';
  workspace: string;
  warmUpWorkspace?: string;
  tarFile?: string;
  /** The least a download's body holds, or the files an upload's answer must count. */
  expect: number;
}

async function call(spec: ArchiveCallSpec, workspace: string, tar: Uint8Array | undefined): Promise<number> {
  const started = performance.now();
  const authorization = `Bearer ${spec.key}`;
  const response = await fetch(`${spec.url}/v1/workspaces/${workspace}/archive`, {
    method: spec.kind === 'upload' ? 'PUT' : 'GET',
    headers: { authorization },
    ...(tar === undefined ? {} : { body: tar }),
  });
  const bytes = await response.arrayBuffer();
  const elapsed = performance.now() - started;
  if (response.status !== 200) throw new Error(`${spec.kind} answered ${response.status}`);
  if (spec.kind === 'upload') {
    const answer = JSON.parse(new TextDecoder().decode(bytes)) as { files?: number };
    if (answer.files !== spec.expect) throw new Error(`upload answered ${JSON.stringify(answer)}`);
  } else if (bytes.byteLength < spec.expect) throw new Error(`download answered ${bytes.byteLength} bytes`);
  return elapsed;
}

/** A paced upload (see ArchiveCallSpec): milliseconds from its last byte written to the answer's end. */
async function pacedUpload(spec: ArchiveCallSpec, tar: Uint8Array): Promise<number> {
  return new Promise((resolve, reject) => {
    let last = 0;
    const sent = request(
      `${spec.url}/v1/workspaces/${spec.workspace}/archive`,
      { method: 'PUT', headers: { authorization: `Bearer ${spec.key}`, 'content-length': tar.byteLength } },
      (response) => {
        response.resume();
        response.on('end', () =>
          response.statusCode === 200
            ? resolve(performance.now() - last)
            : reject(new Error(`paced upload answered ${response.statusCode}`)),
        );
      },
    );
    sent.on('error', reject);
    let at = 0;
    const step = () => {
      const chunk = tar.subarray(at, (at += 64 * 1024));
      if (at < tar.byteLength) {
        sent.write(chunk);
        setTimeout(step, 5);
      } else sent.end(chunk, () => (last = performance.now()));
    };
    step();
  });
}

/** Milliseconds the timed call took; `between` runs after the untimed call, before the timed one. */
export async function archiveCall(spec: ArchiveCallSpec, between?: () => Promise<void>): Promise<number> {
  const tar = spec.tarFile === undefined ? undefined : new Uint8Array(await readFile(spec.tarFile));
  if (spec.kind === 'paced') return pacedUpload(spec, tar!);
  // The first call of a process pays for its connection and its code's first runs.
  await call(spec, spec.warmUpWorkspace ?? spec.workspace, tar);
  await between?.();
  return call(spec, spec.workspace, tar);
}

if (process.argv[2] === '--child') {
  const spec = JSON.parse(process.argv[3]!) as ArchiveCallSpec;
  // Started with an IPC channel (archive-bench.ts), it tells the parent its untimed call is done and waits for a go.
  const send = process.send?.bind(process);
  const between =
    send === undefined
      ? undefined
      : () =>
          new Promise<void>((resolve) => {
            process.once('message', () => resolve());
            send('warmed');
          });
  archiveCall(spec, between).then(
    (ms) => {
      process.stdout.write(JSON.stringify(ms));
      if (send !== undefined) process.disconnect();
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
      if (send !== undefined) process.disconnect();
    },
  );
}
