// The budgeted locator (ids per line, candidates from the rarest pattern line) against the one it replaced
// (reference/*-before.ts): 10,000 random files and patches made from edits of them, seeded, land alike.
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../../src/core/errors.ts';
import { applyHunksWithRanges } from '../../../src/tools/apply-patch/apply-hunks.ts';
import type { Hunk } from '../../../src/tools/apply-patch/patch.ts';
import { LineIndex } from '../../../src/tools/apply-patch/line-index.ts';
import { seekSequence } from '../../../src/tools/apply-patch/seek.ts';
import { applyHunksWithRanges as applyHunksBefore } from './reference/apply-hunks-before.ts';
import { LineFolds, seekSequence as seekSequenceBefore } from './reference/seek-before.ts';

/** mulberry32: a small seeded PRNG, so that every run tries the same cases. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Lines that repeat (so that patterns match in several places), and lines that differ only in
 * whitespace or punctuation (so that the forgiving passes have work).
 */
const VOCABULARY = [
  '',
  '}',
  '  }',
  'a',
  'a  ',
  '  a',
  'b',
  'return 1;',
  '  return 1;',
  'x - y',
  'x \u2013 y',
  'say "hi"',
  'say \u201chi\u201d',
  'if (x) {',
  '\tif (x) {',
];

function makeCase(random: () => number): { original: string; hunks: Hunk[] } {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const int = (below: number) => Math.floor(random() * below);
  const count = int(60);
  const distinct = random() < 0.5;
  const lines = Array.from({ length: count }, (_, i) => (distinct && random() < 0.5 ? `line ${i}` : pick(VOCABULARY)));
  const crlf = random() < 0.15;
  const eol = crlf ? '\r\n' : '\n';
  const original = lines.length === 0 ? '' : lines.join(eol) + (random() < 0.8 ? eol : '');
  // Hunks cut from the file at increasing places, then changed the ways models change them.
  const hunks: Hunk[] = [];
  let at = 0;
  for (let h = int(5); h >= 0 && at <= count; h -= 1) {
    at += int(8);
    const length = Math.min(int(5), Math.max(0, count - at));
    const oldLines = lines.slice(at, at + length).map((line) => {
      const roll = random();
      if (roll < 0.08) return line.trim(); // whitespace lost
      if (roll < 0.12) return `${line}  `; // whitespace added
      if (roll < 0.16) return line.replace('\u2013', '-').replace(/[\u201c\u201d]/g, '"'); // ASCII punctuation
      if (roll < 0.19) return pick(VOCABULARY); // a line the model misremembered
      return line;
    });
    if (random() < 0.1) oldLines.push(''); // Codex's trailing empty line
    const newLines = oldLines.filter(() => random() < 0.6);
    if (random() < 0.5) newLines.push(`new ${h}`);
    const hunk: Hunk = {
      anchors: random() < 0.25 && count > 0 ? [lines[int(Math.min(at, count))]!] : [],
      oldLines: crlf && random() < 0.5 ? oldLines.map((line) => `${line}\r`) : oldLines,
      newLines,
      endOfFile: random() < 0.1,
      line: hunks.length + 3,
    };
    if (random() < 0.2) hunk.oldStart = Math.max(1, at + 1 + int(5) - 2);
    if (hunk.anchors.length === 1 && random() < 0.2) hunk.oldLines.unshift(hunk.anchors[0]!); // the repeated @@ line
    if (random() < 0.05) hunk.finalNewline = random() < 0.5;
    hunks.push(hunk);
    at += length;
  }
  if (random() < 0.05) hunks.reverse(); // out of order: Codex's forward-only cursor refuses most
  return { original, hunks };
}

type Outcome = { text: string; ranges: unknown } | { code: string; message: string; details: unknown };

async function outcomeOf(run: () => Promise<{ text: string; ranges: unknown }>): Promise<Outcome> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof ToolError)) throw error;
    return { code: error.code, message: error.message, details: error.details };
  }
}

describe('the budgeted locator', () => {
  it('places every hunk of 10,000 random patches where the locator it replaced did, and refuses the same ones', async () => {
    const random = prng(17);
    let applied = 0;
    let fuzzy = 0;
    for (let run = 0; run < 10_000; run += 1) {
      const { original, hunks } = makeCase(random);
      const before = await outcomeOf(async () => applyHunksBefore('f', original, hunks));
      const after = await outcomeOf(() => applyHunksWithRanges('f', original, hunks));
      if (JSON.stringify(after) !== JSON.stringify(before)) {
        // One readable failure rather than 10,000 assertions.
        expect({ run, original, hunks, after }).toEqual({ run, original, hunks, after: before });
      }
      if ('text' in before) applied += 1;
      if ('text' in before && hunks.some((hunk) => hunk.oldLines.some((line) => line.endsWith('  ')))) fuzzy += 1;
    }
    // The cases reach both answers, and the forgiving passes, often.
    expect(applied).toBeGreaterThan(2_000);
    expect(applied).toBeLessThan(8_000);
    expect(fuzzy).toBeGreaterThan(200);
  });

  it('answers every seek of 10,000 random patterns in random files as the seek it replaced', async () => {
    const random = prng(42);
    for (let run = 0; run < 10_000; run += 1) {
      const count = Math.floor(random() * 40);
      const lines = Array.from({ length: count }, () => VOCABULARY[Math.floor(random() * 6) + 3]!);
      const oldIndex = new LineFolds(lines);
      const newIndex = new LineIndex(lines);
      for (let seek = 0; seek < 5; seek += 1) {
        const from = Math.floor(random() * (count + 2));
        const pattern =
          random() < 0.7
            ? lines.slice(from, from + Math.floor(random() * 4))
            : Array.from({ length: Math.floor(random() * 4) }, () => VOCABULARY[Math.floor(random() * 6) + 3]!);
        const start = Math.floor(random() * (count + 2)) - 1;
        const endOfFile = random() < 0.2;
        const expected = seekSequenceBefore(lines, pattern, start, endOfFile, oldIndex);
        const found = await seekSequence(lines, pattern, start, endOfFile, newIndex);
        if (found !== expected)
          expect({ lines, pattern, start, endOfFile, found }).toEqual({
            lines,
            pattern,
            start,
            endOfFile,
            found: expected,
          });
      }
    }
  });
});
