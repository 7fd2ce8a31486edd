// What a command reads and writes: its environment, stdin, JSON answers on stdout, messages on stderr.
import type { Writable } from 'node:stream';

export interface CliIo {
  env: Record<string, string | undefined>;
  /** Pretty-prints JSON for a person; a pipe gets one line per answer. */
  stdoutIsTty: boolean;
  out(text: string): void;
  /** stdout as a byte stream, for an archive written there. */
  stdout: Writable;
  err(text: string): void;
  readStdin(): Promise<string>;
}

export function processIo(): CliIo {
  return {
    env: process.env,
    stdoutIsTty: process.stdout.isTTY === true,
    out: (text) => void process.stdout.write(text),
    stdout: process.stdout,
    err: (text) => void process.stderr.write(text),
    async readStdin() {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}

export function printJson(io: CliIo, value: unknown): void {
  io.out(`${JSON.stringify(value, null, io.stdoutIsTty ? 2 : undefined)}\n`);
}
