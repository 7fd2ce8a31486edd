// Property: over random manifests full of symlinks and random inputs, the guard resolves inside the workspace or refuses with a guard code.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/errors.ts';
import {
  isDeniedForWrite,
  resolvePath,
  type GuardEntry,
  type GuardOptions,
  type GuardPolicy,
} from '../../src/core/path-guard.ts';
import { parseVirtualPath } from '../../src/core/virtual-path.ts';
import { dir, file, link, manifestView } from './in-memory-manifest-view.ts';

const guardCodes = ['invalid_argument', 'path_outside_workspace', 'path_denied', 'symlink_loop'];

// Few names, so links land on each other: chains, cycles, links through links, links to parents.
const names = ['a', 'b', 'l1', 'l2', 'l3', '.ssh', '\u00e9'];
const name = fc.constantFrom(...names);
const entryPath = fc
  .oneof(
    { weight: 4, arbitrary: fc.tuple(name) },
    { weight: 2, arbitrary: fc.tuple(name, name) },
    { weight: 1, arbitrary: fc.tuple(name, name, name) },
  )
  .map((parts) => parts.join('/'));
const targetPiece = fc.oneof({ weight: 5, arbitrary: name }, { weight: 2, arbitrary: fc.constantFrom('..', '.', '') });
const wellFormedTarget = fc
  .tuple(fc.boolean(), fc.array(targetPiece, { minLength: 1, maxLength: 4 }))
  .map(([absolute, parts]) => `${absolute ? '/' : ''}${parts.join('/')}`);
const oddTarget = fc.constantFrom('', null, 'x\u0000y', 'c\\d', 'e\u0301', 'a\nb', '../..', '/..', '//a//');
const entry: fc.Arbitrary<GuardEntry> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(file, dir) },
  { weight: 8, arbitrary: wellFormedTarget.map(link) },
  { weight: 1, arbitrary: oddTarget.map(link) },
);
const manifest = fc.dictionary(entryPath, entry, { minKeys: 2, maxKeys: 10 });

// Mostly names the manifest uses; also dots, empties, denylisted names in odd cases, and characters that must be refused.
const piece = fc.oneof(
  { weight: 14, arbitrary: name },
  { weight: 2, arbitrary: fc.constantFrom('..', '.', '') },
  { weight: 2, arbitrary: fc.constantFrom('.SSH', '.git', 'hooks', 'target', '%2e%2e', '...', '\u202e') },
  { weight: 1, arbitrary: fc.constantFrom('e\u0301', '\u0000', 'x\ny', '\u0085', '\\', '\ud800') },
);
const builtInput = fc
  .tuple(fc.boolean(), fc.array(piece, { minLength: 1, maxLength: 6 }), fc.boolean())
  .map(([leading, parts, trailing]) => `${leading ? '/' : ''}${parts.join('/')}${trailing ? '/' : ''}`);
const input: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 12, arbitrary: builtInput },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  { weight: 1, arbitrary: fc.anything() },
);
const options: fc.Arbitrary<GuardOptions> = fc.record({
  access: fc.constantFrom('read', 'write'),
  followFinalSymlink: fc.boolean(),
  directory: fc.boolean(),
});
const policy: fc.Arbitrary<GuardPolicy> = fc.record({
  excludedPaths: fc.subarray(['target', 'a/b', '\u00e9']),
  readOnlyRoots: fc.subarray(['b', 'a/l1']),
});

function isValidName(name: string): boolean {
  if (name === '' || name === '.' || name === '..') return false;
  try {
    return parseVirtualPath(name).segments.length === 1;
  } catch {
    return false;
  }
}

/** Resolves once and checks everything that must hold for whatever came out; plain checks keep 100,000 runs quick. */
async function checkResolution(
  entries: Record<string, GuardEntry>,
  given: unknown,
  guardPolicy: GuardPolicy,
  guardOptions: GuardOptions,
): Promise<void> {
  const view = manifestView(entries);
  let resolved;
  try {
    resolved = await resolvePath(view, given, guardPolicy, guardOptions);
  } catch (error) {
    if (!(error instanceof ToolError) || !guardCodes.includes(error.code))
      throw new Error(`refused with something other than a guard code: ${String(error)}`);
    return;
  }
  const problems: string[] = [];
  // Inside the workspace: every segment is a real name, so nothing climbs out or aliases another path.
  if (!resolved.segments.every(isValidName)) problems.push('a segment is not a valid name');
  if (resolved.path !== resolved.segments.join('/') || parseVirtualPath(resolved.path).path !== resolved.path)
    problems.push('path is not canonical');
  if (!(resolved.hops >= 0 && resolved.hops <= 8)) problems.push(`hops ${resolved.hops}`);
  if (resolved.input !== given) problems.push('input not echoed');
  if (resolved.entry !== view.entry(resolved.path)) problems.push('entry is not the one at the resolved path');
  if (
    guardOptions.access === 'write' &&
    (isDeniedForWrite(resolved.segments) || isDeniedForWrite(parseVirtualPath(given, { directory: true }).segments))
  ) {
    problems.push('a denied path was let through for writing');
  }
  // Canonical: no link remains to follow on the way, so resolving the answer again changes nothing.
  const again = await resolvePath(
    view,
    resolved.path,
    {},
    { access: 'read', followFinalSymlink: guardOptions.followFinalSymlink },
  );
  if (again.path !== resolved.path || again.hops !== 0)
    problems.push(
      `resolving ${JSON.stringify(resolved.path)} again gave ${JSON.stringify(again.path)} in ${again.hops} hops`,
    );
  expect(problems, JSON.stringify(resolved)).toEqual([]);
}

describe('resolvePath over generated manifests and paths', () => {
  it('resolves inside the workspace in at most 8 hops, or refuses with a guard code (70,000 runs)', async () => {
    await fc.assert(fc.asyncProperty(manifest, input, policy, options, checkResolution), { numRuns: 70_000 });
  });

  it('does the same for arbitrary strings and values against a manifest of escapes, cycles and chains (30,000 runs)', async () => {
    const tricky: Record<string, GuardEntry> = {
      up: link('..'),
      'a/b/up': link('..'),
      'a/deep': link('../../..'),
      self: link('self'),
      ping: link('pong/x'),
      pong: link('ping'),
      abs: link('/a'),
      dot: link('.'),
      via: link('dot/../x'),
      safe: link('.ssh'),
      c1: link('c2'),
      c2: link('c3'),
      c3: link('c4'),
      c4: link('c5'),
      c5: link('c6'),
      c6: link('c7'),
      c7: link('c8'),
      c8: link('c9'),
      c9: link('a'),
      'a/f': file,
    };
    const path = fc.oneof(
      {
        weight: 3,
        arbitrary: fc
          .array(fc.constantFrom(...Object.keys(tricky), 'x', '..', '.', ''), { maxLength: 6 })
          .map((parts) => parts.join('/')),
      },
      { weight: 1, arbitrary: input },
    );
    await fc.assert(
      fc.asyncProperty(path, policy, options, (given, guardPolicy, guardOptions) =>
        checkResolution(tricky, given, guardPolicy, guardOptions),
      ),
      { numRuns: 30_000 },
    );
  });
});
