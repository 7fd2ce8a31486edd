// The one path guard for every tool, Move to target and cwd: validation, symlinks, containment, write rules.
import { ToolError } from './errors.ts';
import { joinPath, MAX_PATH_BYTES, parseVirtualPath, utf8ByteLength } from './virtual-path.ts';

export type EntryType = 'file' | 'dir' | 'symlink';

export interface GuardEntry {
  type: EntryType;
  /** The link's target as stored, for symlinks. */
  target?: string | null;
}

/**
 * What the guard may ask of a workspace: the entry at one canonical path (`''` is the root), at
 * once. Every home's manifest answers synchronously (SQLite, a Durable Object's SQL), so the guard
 * runs without a turn of the event loop: an archive resolves thousands of paths, and a promise
 * and a suspended frame for each lookup were a quarter of what its unpacking allocated.
 */
export interface ManifestView {
  entry(path: string): GuardEntry | undefined;
}

/** A view with the entries a commit being planned will leave seen first (`planned`), then `base`'s. */
export class PlannedView implements ManifestView {
  constructor(
    private readonly base: ManifestView,
    private readonly planned: (path: string) => GuardEntry | undefined,
  ) {}

  entry(path: string): GuardEntry | undefined {
    return this.planned(path) ?? this.base.entry(path);
  }
}

export interface GuardPolicy {
  /** Root-relative virtual paths that writes may not reach, compared by whole segments. */
  excludedPaths?: readonly string[];
  /** Virtual paths that reads may reach and writes may not. */
  readOnlyRoots?: readonly string[];
  maxSymlinkHops?: number;
}

export type Access = 'read' | 'write';

export interface GuardOptions {
  access: Access;
  /** Default true. False resolves a final link to the link itself (delete, rename over it). */
  followFinalSymlink?: boolean;
  /** A trailing `/` is allowed (listing prefix, cwd). */
  directory?: boolean;
}

export interface ResolvedPath {
  input: string;
  /** Canonical path after following symlinks; `''` is the root. No segment of it is a followed link. */
  path: string;
  segments: string[];
  /** The entry at `path`; the link itself when the final link was not followed; undefined when absent. */
  entry: GuardEntry | undefined;
  hops: number;
  /** The read-only root containing `path`, if any. */
  readOnlyRoot?: string;
}

export const DEFAULT_MAX_SYMLINK_HOPS = 8;

/** The link whose target a pending segment came from, and the link that one came from, and so on. */
interface Origin {
  link: string;
  target: string;
  via: Origin | undefined;
}

interface Pending {
  name: string;
  origin: Origin | undefined;
}

/**
 * Resolves `input` against the workspace one segment at a time, following links as the kernel would:
 * a target's `.` and `..` apply to the already resolved parent, so the answer agrees with what a
 * runner sees on disk. One lookup per segment walked: the cost depends on depth and hops only.
 */
export function resolvePath(
  view: ManifestView,
  input: unknown,
  policy: GuardPolicy,
  options: GuardOptions,
): ResolvedPath {
  const parsed = parseVirtualPath(input, { directory: options.directory });
  const shown = input as string;
  if (options.access === 'write') assertWritable(parsed.segments, policy, shown);

  // A trailing slash asks for what the link points to, as it does for the kernel.
  const followFinal = options.followFinalSymlink !== false || parsed.trailingSlash;
  const maxHops = policy.maxSymlinkHops ?? DEFAULT_MAX_SYMLINK_HOPS;
  // Loops, not callbacks, here and in assertWritable: under tsx (`npm start`) every closure made
  // per call is named with a property definition, a microsecond each, thousands of times an archive.
  const pending: Pending[] = [];
  for (let i = parsed.segments.length - 1; i >= 0; i--) pending.push({ name: parsed.segments[i]!, origin: undefined });
  const resolved: string[] = [];
  const prefixes: string[] = [];
  let entry: GuardEntry | undefined;
  let entryFresh = false;
  let hops = 0;

  while (pending.length > 0) {
    const { name, origin } = pending.pop()!;
    if (name === '.') continue;
    if (name === '..') {
      // Only link targets carry `..`: parseVirtualPath refuses it in input.
      if (resolved.length === 0) throw leavesWorkspace(shown, origin!);
      resolved.pop();
      prefixes.pop();
      entryFresh = false;
      continue;
    }
    const path = prefixes.length === 0 ? name : `${prefixes[prefixes.length - 1]}/${name}`;
    const found = view.entry(path);
    if (found?.type === 'symlink' && (pending.length > 0 || followFinal)) {
      hops += 1;
      const target = typeof found.target === 'string' ? found.target : '';
      if (expanding(origin, path)) throw symlinkLoop(shown, path, target, 'cycle');
      if (hops > maxHops) throw symlinkLoop(shown, path, target, 'hops', maxHops);
      const link: Origin = { link: path, target, via: origin };
      const targetSegments = linkTargetSegments(shown, link);
      if (target.startsWith('/')) {
        resolved.length = 0;
        prefixes.length = 0;
      }
      for (let i = targetSegments.length - 1; i >= 0; i--) pending.push({ name: targetSegments[i]!, origin: link });
      entryFresh = false;
      continue;
    }
    resolved.push(name);
    prefixes.push(path);
    entry = found;
    entryFresh = true;
  }

  const path = joinPath(resolved);
  if (!entryFresh) entry = resolved.length === 0 ? (view.entry('') ?? { type: 'dir' }) : view.entry(path);
  if (utf8ByteLength(path, MAX_PATH_BYTES) > MAX_PATH_BYTES) {
    throw new ToolError(
      'invalid_argument',
      `The path ${quote(shown)} resolves through symlinks to a path longer than ${MAX_PATH_BYTES} bytes; use a shorter path or shorter link targets.`,
      { path: shown },
    );
  }
  if (options.access === 'write') assertWritable(resolved, policy, shown);

  const result: ResolvedPath = { input: shown, path, segments: resolved, entry, hops };
  const readOnlyRoot = containingRoot(resolved, policy.readOnlyRoots ?? []);
  if (readOnlyRoot !== undefined) result.readOnlyRoot = readOnlyRoot;
  return result;
}

/**
 * True for `.ssh` or `.aws` at any depth, and for a `hooks` segment anywhere below a `.git`
 * segment, in any letter case: git runs a submodule's hooks from `.git/modules/<name>/hooks`
 * as it runs the repository's own from `.git/hooks`.
 */
export function isDeniedForWrite(segments: readonly string[]): boolean {
  let belowGit = false;
  for (const segment of segments) {
    const name = fold(segment);
    if (name === '.ssh' || name === '.aws') return true;
    if (belowGit && name === 'hooks') return true;
    if (name === '.git') belowGit = true;
  }
  return false;
}

/** True when an excluded path is a whole-segment prefix of `segments`, compared in any letter case. */
export function isExcluded(segments: readonly string[], excludedPaths: readonly string[]): boolean {
  return excludedPaths.some((excluded) =>
    isUnder(segments, parseVirtualPath(excluded, { directory: true }).segments, fold),
  );
}

/** Refuses a write to `segments` with `path_denied`; `shownPath` is the path as the caller sent it. */
export function assertWritable(segments: readonly string[], policy: GuardPolicy, shownPath: string): void {
  if (isDeniedForWrite(segments)) {
    throw new ToolError(
      'path_denied',
      `The path ${quote(shownPath)}${resolvedAs(segments, shownPath)} is inside .ssh, .aws or a hooks directory under .git, which tools may not write; choose another path.`,
      { path: shownPath },
    );
  }
  for (const excluded of policy.excludedPaths ?? []) {
    if (!isExcluded(segments, [excluded])) continue;
    throw new ToolError(
      'path_denied',
      `The path ${quote(shownPath)}${resolvedAs(segments, shownPath)} is under the excluded path ${quote(excluded)}, which tools may not write; choose another path.`,
      { path: shownPath },
    );
  }
  // Folded here although reads match exactly: a write refused too often is safe, one let through is not.
  for (const readOnly of policy.readOnlyRoots ?? []) {
    if (!isUnder(segments, parseVirtualPath(readOnly, { directory: true }).segments, fold)) continue;
    throw new ToolError(
      'path_denied',
      `The path ${quote(shownPath)}${resolvedAs(segments, shownPath)} is under the read-only root ${quote(readOnly)}; write somewhere else in the workspace.`,
      { path: shownPath },
    );
  }
}

/** How a refusal names the resolved path when it differs from the one given; spelled only for a refusal (most calls pass). */
function resolvedAs(segments: readonly string[], shownPath: string): string {
  return joinPath(segments) === shownPath ? '' : ` (as ${quote(joinPath(segments))})`;
}

/** Upper then lower case, so `ſ` (long s) and `K` (Kelvin) meet `s` and `k` as a folding disk would. */
function fold(name: string): string {
  return name.toUpperCase().toLowerCase();
}

function isUnder(segments: readonly string[], prefix: readonly string[], compare: (name: string) => string): boolean {
  if (prefix.length > segments.length) return false;
  for (let i = 0; i < prefix.length; i++) if (compare(prefix[i]!) !== compare(segments[i]!)) return false;
  return true;
}

/** The most specific read-only root holding `segments`, in canonical form, matched exactly. */
function containingRoot(segments: readonly string[], roots: readonly string[]): string | undefined {
  let best: string[] | undefined;
  for (const root of roots) {
    const rootSegments = parseVirtualPath(root, { directory: true }).segments;
    if (isUnder(segments, rootSegments, (name) => name) && (best === undefined || rootSegments.length > best.length))
      best = rootSegments;
  }
  return best === undefined ? undefined : joinPath(best);
}

/** True when resolving `link` is already under way for this segment: the target leads back to it. */
function expanding(origin: Origin | undefined, link: string): boolean {
  for (let at = origin; at !== undefined; at = at.via) if (at.link === link) return true;
  return false;
}

/** The segments of a link's target (`.`, `..` kept for the walk), or path_outside_workspace when unsafe. */
function linkTargetSegments(shown: string, link: Origin): string[] {
  const { target } = link;
  const unsafe = (why: string): ToolError =>
    new ToolError(
      'path_outside_workspace',
      `The path ${quote(shown)} goes through the symlink ${quote(link.link)}, whose target ${quote(target)} ${why}, so it cannot be followed safely; replace the link.`,
      { path: shown, link: link.link, target },
    );
  if (target === '') throw unsafe('is empty or missing');
  if (utf8ByteLength(target, MAX_PATH_BYTES) > MAX_PATH_BYTES) throw unsafe(`is longer than ${MAX_PATH_BYTES} bytes`);
  const names = target.split('/').filter((name) => name !== '');
  for (const name of names) {
    if (name === '.' || name === '..') continue;
    try {
      parseVirtualPath(name);
    } catch {
      throw unsafe('has a name that is not a valid path segment (a control character, backslash, or non-NFC text)');
    }
  }
  return names;
}

function leavesWorkspace(shown: string, origin: Origin): ToolError {
  return new ToolError(
    'path_outside_workspace',
    `The path ${quote(shown)} goes through the symlink ${quote(origin.link)} -> ${quote(origin.target)}, which leads outside the workspace; use a path that stays inside.`,
    { path: shown, link: origin.link, target: origin.target },
  );
}

function symlinkLoop(shown: string, link: string, target: string, kind: 'cycle' | 'hops', maxHops = 0): ToolError {
  const why =
    kind === 'cycle'
      ? `the symlink ${quote(link)} -> ${quote(target)} is part of a cycle`
      : `it needs more than ${maxHops} symlink hops (the last at ${quote(link)})`;
  return new ToolError(
    'symlink_loop',
    `The path ${quote(shown)} cannot be resolved because ${why}; point the link at its final target.`,
    { path: shown, link, target },
  );
}

function quote(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}
