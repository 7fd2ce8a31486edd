// Every Codex apply_patch unit case and scenario in test/fixtures/conformance/apply_patch (copied from Codex; see PROVENANCE.md there): asserted, or listed here as a divergence with its reason.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ToolError, type ErrorCode } from '../../../src/core/errors.ts';
import { applyHunks } from '../../../src/tools/apply-patch/apply-hunks.ts';
import { parsePatch } from '../../../src/tools/apply-patch/parse-patch.ts';
import type { FileOperation } from '../../../src/tools/apply-patch/patch.ts';
import { seekSequence } from '../../../src/tools/apply-patch/seek.ts';

type Files = Record<string, string>;

interface ApplyCase {
  id: string;
  input_files: Files;
  patch: string;
  expected_files: Files;
  expected_error_contains?: string;
  expected_stderr?: string;
  expected_exit?: number;
}
interface SeekCase {
  id: string;
  lines: string[];
  pattern: string[];
  start: number;
  eof: boolean;
  expected_index: number | null;
}
interface ParserCase {
  id: string;
  patch: string;
  expected_error?: string;
  expected_hunks?: unknown[] | string;
}
interface ChunkCase {
  id: string;
  lines: string[];
  line_number: number;
  allow_missing_context: boolean;
  expected_error?: string;
  expected_error_line?: number;
  expected_chunk?: unknown;
  expected_lines_consumed?: number;
}
interface UnitCases {
  apply_cases: ApplyCase[];
  seek_sequence_cases: SeekCase[];
  parser_cases: ParserCase[];
  classic_update_chunk_cases: ChunkCase[];
}

const root = new URL('../../fixtures/conformance/apply_patch/', import.meta.url);
const data = JSON.parse(readFileSync(new URL('unit-cases.json', root), 'utf8')) as UnitCases;

/**
 * Applies a parsed patch to files in memory, all or nothing as toolgate does. Whether a file exists,
 * may be overwritten or is a directory is the workspace layer's business, not these modules'.
 */
async function applyInMemory(files: Files, patch: string): Promise<Files> {
  const next: Files = { ...files };
  for (const operation of parsePatch(patch).operations) {
    if (operation.kind === 'add') {
      next[operation.path] = operation.contents;
    } else if (operation.kind === 'delete') {
      delete next[operation.path];
    } else {
      const original = next[operation.path];
      if (original === undefined) throw new Error(`the in-memory workspace has no ${operation.path}`);
      delete next[operation.path];
      next[operation.moveTo ?? operation.path] = await applyHunks(operation.path, original, operation.hunks);
    }
  }
  return next;
}

async function outcome(files: Files, patch: string): Promise<{ files: Files; error?: ToolError }> {
  try {
    return { files: await applyInMemory(files, patch) };
  } catch (error) {
    if (error instanceof ToolError) return { files, error };
    throw error;
  }
}

/** Asserted cases that must fail, with toolgate's code (and patch line, for parse errors). */
const applyFailures: Record<string, { code: ErrorCode; line?: number }> = {
  missing_second_chunk_context_rejected: { code: 'patch_conflict' },
  cli_rejects_empty_patch: { code: 'patch_invalid', line: 2 },
  cli_rejects_empty_update_hunk: { code: 'patch_invalid', line: 2 },
  cli_rejects_invalid_hunk_header: { code: 'patch_invalid', line: 2 },
  cli_reports_missing_context: { code: 'patch_conflict' },
};

const notFoundIsWorkspaces = "a missing file is the workspace layer's not_found, outside these text modules";
/** apply_cases these modules do not assert, and why. Summaries (expected_stdout) and diffs are the tool layer's. */
const applyDivergences: Record<string, string> = {
  cli_requires_existing_file_for_update: notFoundIsWorkspaces,
  cli_rejects_missing_file_delete: notFoundIsWorkspaces,
  cli_failure_after_partial_success_leaves_changes: `toolgate is atomic: nothing is created when a later operation fails (Codex's standalone CLI keeps created.txt); also ${notFoundIsWorkspaces}`,
  core_verification_failure_has_no_side_effects: `${notFoundIsWorkspaces}; atomicity is the apply_patch tool's, as in this Codex mode`,
};

/** Parser cases toolgate answers differently on purpose. */
const parserDivergences: Record<string, string> = {
  parse_empty_patch_ok:
    'toolgate refuses a patch with no operations at parse time (docs/api.md: patch_invalid), as the Codex CLI does later',
  parse_environment_id_preamble:
    'toolgate has no multi-environment patches: `*** Environment ID:` is an unknown header, patch_invalid',
};
/** Patch lines of the parser errors. Codex's messages differ by design; toolgate always names a line. */
const parserErrorLines: Record<string, number> = {
  parse_bad_first_line: 1,
  parse_bad_last_line: 2,
  parse_empty_update_hunk: 2,
  parse_lenient_heredoc_mismatched_quotes: 1,
  parse_lenient_heredoc_missing_end_patch: 3,
  parse_environment_id_empty: 2,
};

function codexShape(operation: FileOperation): unknown {
  if (operation.kind === 'add') return { type: 'AddFile', path: operation.path, contents: operation.contents };
  if (operation.kind === 'delete') return { type: 'DeleteFile', path: operation.path };
  return {
    type: 'UpdateFile',
    path: operation.path,
    move_path: operation.moveTo ?? null,
    chunks: operation.hunks.map((hunk) => {
      expect(hunk.anchors.length).toBeLessThanOrEqual(1);
      return {
        change_context: hunk.anchors[0] ?? null,
        old_lines: hunk.oldLines,
        new_lines: hunk.newLines,
        is_end_of_file: hunk.endOfFile,
      };
    }),
  };
}

function refusal(run: () => unknown): ToolError {
  try {
    run();
  } catch (error) {
    if (error instanceof ToolError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('Codex apply_cases', () => {
  const cases = data.apply_cases;
  const asserted = cases.filter((entry) => !(entry.id in applyDivergences));

  it('accounts for every case', () => {
    expect(Object.keys(applyDivergences).every((id) => cases.some((entry) => entry.id === id))).toBe(true);
    expect(asserted.length + Object.keys(applyDivergences).length).toBe(cases.length);
    // Pinned, so that a new case or a new reason to diverge shows up here.
    expect([asserted.length, cases.length]).toEqual([20, 24]);
    const failing = asserted
      .filter((entry) => entry.expected_error_contains !== undefined || entry.expected_exit !== undefined)
      .map((entry) => entry.id);
    expect(failing.sort()).toEqual(Object.keys(applyFailures).sort());
  });

  it.each(asserted.map((entry) => [entry.id, entry] as const))('%s', async (_id, entry) => {
    const result = await outcome(entry.input_files, entry.patch);
    expect(result.files).toEqual(entry.expected_files);
    const failure = applyFailures[entry.id];
    if (failure === undefined) {
      expect(result.error).toBeUndefined();
    } else {
      expect(result.error?.code).toBe(failure.code);
      if (failure.line !== undefined) expect(result.error?.details?.line).toBe(failure.line);
    }
  });
});

describe('Codex seek_sequence_cases', () => {
  it('asserts every case', () => {
    expect(data.seek_sequence_cases).toHaveLength(4);
    expect(data.classic_update_chunk_cases).toHaveLength(6);
  });

  it.each(data.seek_sequence_cases.map((entry) => [entry.id, entry] as const))('%s', async (_id, entry) => {
    expect(await seekSequence(entry.lines, entry.pattern, entry.start, entry.eof)).toBe(
      entry.expected_index ?? undefined,
    );
  });
});

describe('Codex parser_cases', () => {
  const cases = data.parser_cases;
  const asserted = cases.filter((entry) => !(entry.id in parserDivergences));

  it('accounts for every case', () => {
    expect(Object.keys(parserDivergences).every((id) => cases.some((entry) => entry.id === id))).toBe(true);
    expect(asserted.length + Object.keys(parserDivergences).length).toBe(cases.length);
    expect([asserted.length, cases.length]).toEqual([12, 14]);
    expect(
      asserted
        .filter((entry) => entry.expected_error !== undefined)
        .map((entry) => entry.id)
        .sort(),
    ).toEqual(Object.keys(parserErrorLines).sort());
  });

  it.each(asserted.map((entry) => [entry.id, entry] as const))('%s', (_id, entry) => {
    if (entry.expected_error !== undefined) {
      const error = refusal(() => parsePatch(entry.patch));
      expect(error.code).toBe('patch_invalid');
      expect(error.details?.line).toBe(parserErrorLines[entry.id]);
      return;
    }
    // One case points at another's hunks by name; toolgate always parses leniently, as Codex's default does.
    const reference =
      typeof entry.expected_hunks === 'string' ? /^same as (\S+)$/.exec(entry.expected_hunks)?.[1] : undefined;
    const expected =
      reference === undefined ? entry.expected_hunks : cases.find((other) => other.id === reference)?.expected_hunks;
    expect(Array.isArray(expected)).toBe(true);
    expect(parsePatch(entry.patch).operations.map(codexShape)).toEqual(expected);
  });

  it.each(Object.entries(parserDivergences))('%s diverges: %s', (id) => {
    const entry = cases.find((other) => other.id === id)!;
    expect(refusal(() => parsePatch(entry.patch)).code).toBe('patch_invalid');
  });
});

describe('Codex classic_update_chunk_cases', () => {
  /**
   * Codex's chunk parser is tested alone, from a given line number. Here each chunk goes into an
   * update after a first hunk (so that, as with allow_missing_context false, it needs its `@@`),
   * and the expected line numbers shift by the lines before it.
   */
  const prefix = ['*** Begin Patch', '*** Update File: f', '@@', ' x', '*** End of File'];

  it.each(data.classic_update_chunk_cases.map((entry) => [entry.id, entry] as const))('%s', (_id, entry) => {
    expect(entry.allow_missing_context).toBe(false);
    const body = entry.lines[entry.lines.length - 1] === '*** End Patch' ? entry.lines.slice(0, -1) : entry.lines;
    const patch = [...prefix, ...body, '*** End Patch'].join('\n');
    const shift = prefix.length + 1 - entry.line_number;
    if (entry.expected_error !== undefined) {
      const error = refusal(() => parsePatch(patch));
      expect(error.code).toBe('patch_invalid');
      expect(error.details?.line).toBe(entry.expected_error_line! + shift);
      return;
    }
    const operation = parsePatch(patch).operations[0]!;
    if (operation.kind !== 'update') throw new Error('expected an update');
    expect(operation.hunks).toHaveLength(2);
    expect(body).toHaveLength(entry.expected_lines_consumed!);
    expect(codexShape({ ...operation, hunks: [operation.hunks[1]!] })).toMatchObject({
      chunks: [entry.expected_chunk],
    });
  });
});

function readTree(directory: URL, prefix = ''): Files {
  if (!existsSync(directory)) return {};
  const files: Files = {};
  for (const name of readdirSync(directory)) {
    const entry = new URL(name, directory);
    if (statSync(entry).isDirectory())
      Object.assign(files, readTree(new URL(`${name}/`, directory), `${prefix}${name}/`));
    else files[`${prefix}${name}`] = readFileSync(entry, 'utf8');
  }
  return files;
}

/** Scenarios that must fail, with toolgate's code; Codex leaves their files as they were, and so does toolgate. */
const scenarioFailures: Record<string, ErrorCode> = {
  '005_rejects_empty_patch': 'patch_invalid',
  '006_rejects_missing_context': 'patch_conflict',
  '008_rejects_empty_update_hunk': 'patch_invalid',
  '013_rejects_invalid_hunk_header': 'patch_invalid',
};

/**
 * Scenarios these modules do not assert as Codex has them, and why. 014 is asserted: its stored
 * input does end with a newline. Given a truly newline-less file, Codex adds one while toolgate
 * keeps the file's state (apply-hunks.test.ts).
 */
const scenarioDivergences: Record<string, string> = {
  '007_rejects_missing_file_delete': notFoundIsWorkspaces,
  '009_requires_existing_file_for_update': notFoundIsWorkspaces,
  '010_move_overwrites_existing_destination':
    "whether a move may replace an existing file is the workspace layer's decision",
  '011_add_overwrites_existing_file': "whether an add may replace an existing file is the workspace layer's decision",
  '012_delete_directory_fails': "a directory named by an operation is the workspace layer's is_directory",
  '015_failure_after_partial_success_leaves_changes': `toolgate is atomic: created.txt is not created when the update fails; also ${notFoundIsWorkspaces}`,
};

describe('Codex scenarios', () => {
  const scenariosRoot = new URL('scenarios/', root);
  const names = readdirSync(scenariosRoot)
    .filter((name) => statSync(new URL(name, scenariosRoot)).isDirectory())
    .sort();
  const load = (name: string) => {
    const directory = new URL(`${name}/`, scenariosRoot);
    return {
      patch: readFileSync(new URL('patch.txt', directory), 'utf8'),
      input: readTree(new URL('input/', directory)),
      expected: readTree(new URL('expected/', directory)),
    };
  };
  const asserted = names.filter((name) => !(name in scenarioDivergences));

  it('accounts for every scenario', () => {
    expect(Object.keys(scenarioDivergences).every((name) => names.includes(name))).toBe(true);
    expect(Object.keys(scenarioFailures).every((name) => asserted.includes(name))).toBe(true);
    expect(asserted.length + Object.keys(scenarioDivergences).length).toBe(names.length);
    expect([asserted.length, names.length]).toEqual([17, 23]);
  });

  it.each(asserted)('%s', async (name) => {
    const { patch, input, expected } = load(name);
    const result = await outcome(input, patch);
    expect(result.files).toEqual(expected);
    expect(result.error?.code).toBe(scenarioFailures[name]);
  });
});
