// A key's workspace scope: the workspace ids it may reach, or `*` for every workspace.

/** A scope as keys carry it: workspace ids, or `["*"]`. */
export type WorkspaceScope = readonly string[];

export const ALL_WORKSPACES = '*';

/** Whether `scope` reaches `workspace`. */
export function scopeCovers(scope: WorkspaceScope, workspace: string): boolean {
  return scope.includes(ALL_WORKSPACES) || scope.includes(workspace);
}

/** Whether everything `inner` reaches lies within `outer`: `*` lies only within `*`. */
export function scopeWithin(inner: WorkspaceScope, outer: WorkspaceScope): boolean {
  return scopeOutside(inner, outer).length === 0;
}

/** The workspaces of `scope` outside `outer` (`*` when it asks for every workspace and `outer` does not cover them all). */
export function scopeOutside(inner: WorkspaceScope, outer: WorkspaceScope): string[] {
  if (outer.includes(ALL_WORKSPACES)) return [];
  return inner.filter((workspace) => workspace === ALL_WORKSPACES || !outer.includes(workspace));
}

/** The scope as one SQL parameter, for `workspace IN (SELECT value FROM json_each(?))`; undefined when it covers every workspace. */
export function scopeFilter(scope: WorkspaceScope): string | undefined {
  return scope.includes(ALL_WORKSPACES) ? undefined : JSON.stringify(scope);
}
