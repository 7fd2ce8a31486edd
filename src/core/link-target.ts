// Where a symlink's target leads, worked out on names alone: the rule a runner's copy and an archive share.

/**
 * The canonical path a link at `linkPath` names, resolved lexically from the link's directory
 * (a leading `/` is the workspace root), or undefined when the target is empty or climbs above the
 * root. Links on the way are not followed: a link whose own target stays inside never leads out
 * by itself, and each link on the way is judged by the same rule.
 */
export function linkTargetPath(linkPath: string, target: string): string | undefined {
  if (target === '') return undefined;
  // Resolved segment by segment: `..` above the root (which a normalising join would swallow) is an escape.
  const resolved = target.startsWith('/') ? [] : linkPath.split('/').slice(0, -1);
  for (const name of target.split('/')) {
    if (name === '' || name === '.') continue;
    if (name === '..') {
      if (resolved.length === 0) return undefined;
      resolved.pop();
    } else {
      resolved.push(name);
    }
  }
  return resolved.join('/');
}

/**
 * The target as a relative link from the link's directory (`.` for that directory itself), or
 * undefined when it leaves the workspace: how a link is written where something outside the
 * workspace follows it (a runner's disk, an archive).
 */
export function relativeLinkTarget(linkPath: string, target: string): string | undefined {
  const path = linkTargetPath(linkPath, target);
  if (path === undefined) return undefined;
  const from = linkPath.split('/').slice(0, -1);
  const to = path === '' ? [] : path.split('/');
  let common = 0;
  while (common < from.length && common < to.length && from[common] === to[common]) common += 1;
  const relative = [...from.slice(common).map(() => '..'), ...to.slice(common)].join('/');
  return relative === '' ? '.' : relative;
}

/**
 * A target read from a disk where the workspace is mounted at one of `roots`, in the manifest's
 * terms: relative targets as they are; absolute ones into the workspace become workspace-absolute;
 * any other absolute target becomes a relative one that climbs out of the root, so the guard refuses it.
 */
export function manifestLinkTarget(linkPath: string, target: string, roots: readonly string[]): string {
  if (!target.startsWith('/')) return target;
  for (const base of roots) {
    if (target === base) return '/';
    if (target.startsWith(`${base}/`)) return target.slice(base.length);
  }
  const depth = linkPath.split('/').length;
  return `${'../'.repeat(depth)}${target.replace(/^\/+/, '')}`;
}
