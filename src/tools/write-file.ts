// write_file: create, overwrite or append a file; parents are implied; conditional on a version.
import { writeFileInput } from '../contract/tool-inputs.ts';
import { ToolError } from '../core/errors.ts';
import type { Precondition } from '../workspace/manifest.ts';
import type { Workspace } from '../workspace/workspace.ts';
import { defineTool } from './tool.ts';

const utf8 = new TextEncoder();
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** Retries of a read-modify-write that lost a race to a writer outside this process. */
const MAX_ATTEMPTS = 16;

export const writeFile = defineTool({
  name: 'write_file',
  description:
    'Write a UTF-8 text file in the workspace: mode "create" (fails if it exists), "overwrite" (default) or "append". ' +
    'Give expectedVersion to write only if nobody changed the file since you read it.',
  input: writeFileInput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  async execute(args, { workspace, limits, recordEffect }) {
    const mode = args.mode ?? 'overwrite';
    if (UNPAIRED_SURROGATE.test(args.content)) {
      // UTF-8 cannot hold it: storing would silently replace it with U+FFFD.
      throw new ToolError(
        'invalid_argument',
        'content contains an unpaired UTF-16 surrogate, which is not text; send valid Unicode.',
        { path: args.path },
      );
    }
    const resolved = await workspace.resolve(args.path, 'write');
    const bytes = utf8.encode(args.content);
    return workspace.withWriteLock(resolved.path, async () => {
      for (let attempt = 1; ; attempt += 1) {
        const current = workspace.entry(resolved.path);
        if (current?.type === 'dir') {
          throw new ToolError('is_directory', `${args.path} is a directory; write to a file path instead.`, {
            path: args.path,
          });
        }
        if (mode === 'create' && current) {
          throw new ToolError(
            'already_exists',
            `${args.path} already exists; use mode "overwrite" or "append" to change it.`,
            { path: args.path },
          );
        }
        if (args.expectedVersion !== undefined)
          checkExpectedVersion(workspace, args.path, args.expectedVersion, current?.version);
        const content =
          mode === 'append' && current ? concat(await workspace.readBytes(resolved.path, current), bytes) : bytes;
        if (content.byteLength > limits.maxFileBytes) {
          throw new ToolError(
            'payload_too_large',
            `The file would be ${content.byteLength} bytes, over the limit of ${limits.maxFileBytes} bytes.`,
            {
              path: args.path,
              limit: limits.maxFileBytes,
            },
          );
        }
        const expect: Precondition = current ? { version: current.version } : { absent: true };
        try {
          const commit = await workspace.commit([{ op: 'write', path: resolved.path, content, expect }], recordEffect);
          return {
            resolvedPath: resolved.path,
            mode,
            created: !current,
            appended: mode === 'append',
            bytesWritten: bytes.byteLength,
            version: workspace.formatVersion(commit.version),
          };
        } catch (error) {
          // Another process changed the file between our read and our commit: decide again on fresh state.
          const lostRace =
            error instanceof ToolError &&
            (error.code === 'conflict' || (error.code === 'already_exists' && mode !== 'create'));
          if (!lostRace || attempt >= MAX_ATTEMPTS) throw error;
        }
      }
    });
  },
});

function checkExpectedVersion(workspace: Workspace, path: string, expected: string, current: number | undefined): void {
  if (current === undefined || workspace.parseVersion(expected) !== current) {
    throw new ToolError(
      'conflict',
      current === undefined
        ? `${path} does not exist, so it is not at version ${expected}; read the directory and retry.`
        : `${path} is no longer at version ${expected}; read it again and retry with its current version.`,
      {
        path,
        expectedVersion: expected,
        currentVersion: current === undefined ? null : workspace.formatVersion(current),
      },
    );
  }
}

function concat(head: Uint8Array, tail: Uint8Array): Uint8Array {
  const joined = new Uint8Array(head.byteLength + tail.byteLength);
  joined.set(head, 0);
  joined.set(tail, head.byteLength);
  return joined;
}
