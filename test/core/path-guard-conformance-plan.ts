// How a host-path conformance case becomes guard probes: the divergence rules, the probe shapes, the path mapping.
import { posix } from 'node:path';
import type { Access, GuardEntry, GuardPolicy } from '../../src/core/path-guard.ts';

/** One case of cases.json; groups use different subsets of these fields. */
export interface Case {
  input?: unknown;
  expected?: string;
  platform?: string;
  allowed_roots?: unknown;
  allowed?: string[];
  name?: string;
  post_fix?: string;
  expected_error?: string;
  context?: unknown;
  recommended?: string;
  observed?: string;
  operation?: string;
  patch?: string;
  setup?: unknown;
  fs?: string[];
  target?: string;
  ltarget?: string;
  category?: string;
}

/**
 * Verdicts of cases.json that do not carry over to virtual paths. A case under one of these is counted
 * as a divergence; its probes then assert what toolgate does instead.
 */
export const divergences = {
  dotdotNotNormalised:
    'an allow verdict that needs `..` folded away: a `..` segment is refused on purpose (docs/api.md), even when it would land back inside',
  emptySegmentsNotCollapsed:
    'an allow verdict that needs `//` collapsed: empty segments are refused on purpose (docs/api.md)',
  emptyIsRoot: 'a deny verdict for "": "" names the workspace root (docs/api.md)',
  leadingSlashIsRoot:
    'a deny verdict for an absolute path: a leading / means the workspace root, so the path is re-rooted inside, never read from the host',
  windowsOnly:
    'a verdict that rests on Win32 path meaning (drive letters, UNC, device names, streams, 8.3 names, trailing dots or spaces): virtual paths are never opened through Win32 and the runner is Linux, so such names stay literal and inside',
  rootsConfiguration:
    'an allow-list configuration error (empty, non-array, non-string or NUL roots): a workspace is its one root, set by the server, never by the caller',
  missingIsNotRefused:
    'a deny because a file or parent directory is missing: the guard resolves paths that do not exist yet (write_file implies parents; reads answer not_found)',
  noOutsideSwitch: 'an allow under allowOutsideWorkspace: toolgate has no such switch',
  noReadRestriction:
    'a deny under restrictReadToAllowedRoots: toolgate has no such switch; the workspace is always readable',
  fsOperation:
    'a check of what a file operation does after the guard (O_EXCL, read races): the workspace commit owns that; the probes show the guard refuses the link once it exists',
  noHardLinks: 'a hard link shared with an outside file: a manifest has no hard links, every path is its own entry',
  upstreamBug:
    'a recorded ALLOW that the group itself names as a vulnerability (GHSA-7rgq-gccq-qphx): toolgate refuses',
  danglingEscapeRefused:
    'a recorded ALLOW for a dangling link leading outside (upstream relies on O_EXCL later): the guard refuses it up front',
  observedEscape: 'an observed ALLOW that the group marks as an escape: toolgate refuses',
  absoluteTargetFollowed:
    'os.Root refuses absolute link targets even inside the root: a target starting with / is workspace-absolute and followed (DESIGN.md)',
  altSeparator:
    'werkzeug simulating a platform whose alternative separator is `*`: only / separates virtual path segments',
  refusedNotRepaired:
    'recommended to normalise to NFC and then validate: non-NFC input is refused instead of repaired (docs/api.md)',
} as const;

export type DivergenceRule = keyof typeof divergences;

/**
 * Deny verdicts on strings that are only strange names for a virtual path: each must resolve strictly
 * inside, to exactly its literal spelling (nothing decoded or folded). These count as asserted.
 */
export const literalNames = {
  percentEncoded: 'percent escapes are not decoded anywhere after the JSON body, so `%2e%2e` is a name, not `..`',
  unicodeLookalike:
    'fullwidth dots, the two-dot leader and division or fraction slashes are ordinary characters; no NFKC folding is applied',
  oddDots: 'names such as `...` or `..;` are not `..`',
  bidiOverride: 'U+202E is a format character, not one of the refused controls (C0, DEL, C1)',
  leadingSpace: 'a leading space is part of the name',
  longSegment: 'the contract caps the whole path at 4096 bytes, not a single segment',
  readRootSibling:
    'a sibling of a read-only root sharing its prefix is an ordinary workspace path, not part of the root',
  windowsName:
    'a drive prefix, device name, stream suffix, 8.3 name or trailing dot or space is an ordinary name on Linux (used by windowsOnly divergences)',
} as const;

export type LiteralRule = keyof typeof literalNames;

export type Expectation =
  | { kind: 'deny' }
  | { kind: 'allow'; path?: string; readOnlyRoot?: string | null }
  | { kind: 'literal'; rule: LiteralRule; path: string; readOnlyRoot?: null };

export interface Probe {
  input: unknown;
  expect: Expectation;
  access: Access;
  entries?: Record<string, GuardEntry>;
  policy?: GuardPolicy;
  followFinalSymlink?: boolean;
  /** Default: true when the input ends with `/`, as for the arguments that name directories (cwd, listing prefix). */
  directory?: boolean;
}

export interface Plan {
  divergence?: DivergenceRule;
  probes: Probe[];
}

export type GroupPlanner = (c: Case) => Plan;

type ProbeOptions = Omit<Probe, 'input' | 'expect'>;

export const deny = (input: unknown, options: ProbeOptions): Probe => ({ input, expect: { kind: 'deny' }, ...options });
export const allow = (input: unknown, options: ProbeOptions, path?: string, readOnlyRoot?: string | null): Probe => ({
  input,
  expect: { kind: 'allow', path, readOnlyRoot },
  ...options,
});
export const literal = (input: string, rule: LiteralRule, options: ProbeOptions, readOnlyRoot?: null): Probe => ({
  input,
  expect: { kind: 'literal', rule, path: literalPath(input), readOnlyRoot },
  ...options,
});

/** What a strange name must resolve to: its own text, without `.` and the leading or trailing `/`. */
export function literalPath(input: string): string {
  return input
    .split('/')
    .filter((name) => name !== '' && name !== '.')
    .join('/');
}

/** The divergence an allow verdict meets because toolgate refuses instead of normalising, if any. */
export function refusedNormalisation(input: unknown): DivergenceRule | undefined {
  if (typeof input !== 'string') return undefined;
  if (input.split('/').includes('..')) return 'dotdotNotNormalised';
  if (input.includes('//')) return 'emptySegmentsNotCollapsed';
  return undefined;
}

/** A JSON stand-in for a JavaScript value that is not a string (`{"non_string_js": "null"}`). */
export function jsInput(input: unknown): unknown {
  if (typeof input !== 'object' || input === null || !('non_string_js' in input)) return input;
  const values: Record<string, unknown> = { null: null, undefined, '42': 42, '123': 123, '{}': {}, '[]': [] };
  const name = String((input as { non_string_js: unknown }).non_string_js);
  if (!(name in values)) throw new Error(`unknown non_string_js ${name}`);
  return values[name];
}

/** Roots a host-path case can be mapped onto: absolute strings without NUL, at least one. */
export function usableRoots(roots: unknown): string[] | undefined {
  if (!Array.isArray(roots) || roots.some((root) => typeof root !== 'string' || root.includes('\u0000')))
    return undefined;
  const absolute = (roots as string[]).filter((root) => root.startsWith('/'));
  return absolute.length > 0 ? absolute : undefined;
}

/**
 * A host path named the way a workspace caller would: relative paths stay as they are; an absolute
 * path under a root (compared by whole segments, `.` dropped as the guard drops it) becomes the rest
 * after the root, workspace-absolute; any other absolute path climbs out of the root with `..`.
 * `..` and empty segments of the input are kept, so the guard sees them.
 */
export function hostToVirtual(input: string, roots: readonly string[]): string {
  if (!input.startsWith('/')) return input;
  const names = input
    .slice(1)
    .split('/')
    .filter((name) => name !== '.');
  const rootNames = roots.map((root) => {
    const normalised = posix.normalize(root).replace(/\/+$/, '');
    return normalised === '' ? [] : normalised.slice(1).split('/');
  });
  const under = rootNames
    .filter((root) => root.every((name, i) => names[i] === name))
    .sort((a, b) => b.length - a.length)[0];
  if (under !== undefined) return `/${names.slice(under.length).join('/')}`;
  const first = rootNames[0]!;
  let common = 0;
  while (common < first.length && names[common] === first[common]) common++;
  return [...Array<string>(first.length - common).fill('..'), ...names.slice(common)].join('/');
}

/** A link target on the host, written as the workspace link at `linkPath` under `root` would hold it. */
export function hostTarget(hostPath: string, linkPath: string, root: string): string {
  return posix.relative(posix.join(root, posix.dirname(linkPath)), hostPath);
}
