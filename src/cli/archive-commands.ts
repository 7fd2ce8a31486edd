// toolgate download / upload: a workspace directory to a tar file (or stdout), and a tar file applied in one commit.
import { createWriteStream, openAsBlob } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { printJson, type CliIo } from './cli-io.ts';
import { parseCommandLine, UsageError, wantsHelp } from './command-line.ts';
import { connect, connectionOptions, connectionUsage } from './connection.ts';
import { EXIT_OK } from './failure-report.ts';

export const downloadUsage = `Usage: toolgate download <workspace> [file] [--format tar|tgz] [--prefix <dir>]

Writes a directory of the workspace as a tar to <file>, or to stdout when no file (or -) is
given. Directories (empty ones too), symlinks as links, files with their bytes; modes are not
kept (files 0644, directories 0755).
  --format tar|tgz  tar, or the tar gzip'd (default: tgz when <file> ends in .tgz or .tar.gz, else tar)
  --prefix <dir>    the directory to archive (default the root); entries are named relative to it

${connectionUsage}
Examples:
  toolgate download demo demo.tgz
  toolgate download demo --prefix src | tar -t
`;

export const uploadUsage = `Usage: toolgate upload <workspace> <file> [--mode merge|replace] [--prefix <dir>]

Applies a tar, or a gzip'd tar, to the workspace in one commit and prints what it held as JSON.
Every entry goes through the path guard as a write: one refused entry (.ssh/, .., an absolute
name, a link leading outside) refuses the whole archive and nothing changes.
  --mode merge|replace  merge (default) writes over what is there; replace also deletes every
                        entry under the prefix that the archive lacks
  --prefix <dir>        the directory to unpack into (default the root)

${connectionUsage}
Examples:
  tar -czf src.tgz -C ~/project src && toolgate upload demo src.tgz
  toolgate upload demo build.tar --prefix dist --mode replace
`;

export async function downloadCommand(args: string[], io: CliIo): Promise<number> {
  if (wantsHelp(args)) {
    io.out(downloadUsage);
    return EXIT_OK;
  }
  const { values, positionals } = parseCommandLine(
    { args, options: { ...connectionOptions, format: { type: 'string' }, prefix: { type: 'string' } } },
    downloadUsage,
    { names: ['workspace', 'file'], optional: 1 },
  );
  const [workspace, file] = positionals as [string, string | undefined];
  const toFile = file !== undefined && file !== '-';
  const format = values.format ?? (toFile && /\.(tgz|tar\.gz)$/.test(file) ? 'tgz' : 'tar');
  if (format !== 'tar' && format !== 'tgz')
    throw new UsageError(`--format must be tar or tgz, not ${JSON.stringify(format)}`, downloadUsage);
  const client = connect(values, io, downloadUsage);
  const body = await client.download(workspace, { format, prefix: values.prefix });
  const bytes = Readable.fromWeb(body as NodeReadableStream<Uint8Array>);
  if (!toFile) {
    await pipeline(bytes, io.stdout, { end: false });
    return EXIT_OK;
  }
  // A download cut short leaves no partial file behind.
  await pipeline(bytes, createWriteStream(file)).catch(async (error: unknown) => {
    await rm(file, { force: true });
    throw error;
  });
  return EXIT_OK;
}

export async function uploadCommand(args: string[], io: CliIo): Promise<number> {
  if (wantsHelp(args)) {
    io.out(uploadUsage);
    return EXIT_OK;
  }
  const { values, positionals } = parseCommandLine(
    { args, options: { ...connectionOptions, mode: { type: 'string' }, prefix: { type: 'string' } } },
    uploadUsage,
    { names: ['workspace', 'file'] },
  );
  const [workspace, file] = positionals as [string, string];
  if (values.mode !== undefined && values.mode !== 'merge' && values.mode !== 'replace')
    throw new UsageError(`--mode must be merge or replace, not ${JSON.stringify(values.mode)}`, uploadUsage);
  const client = connect(values, io, uploadUsage);
  const archive = await readableFile(file);
  printJson(io, await client.upload(workspace, archive, { mode: values.mode, prefix: values.prefix }));
  return EXIT_OK;
}

/** The file as a Blob read as it is sent; a path that is no readable file is a usage error (nothing is sent). */
async function readableFile(file: string): Promise<Blob> {
  try {
    if (!(await stat(file)).isFile()) throw new Error('not a file');
    return await openAsBlob(file);
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new UsageError(`cannot read ${JSON.stringify(file)}: ${why}`, uploadUsage);
  }
}
