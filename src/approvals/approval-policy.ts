// The approval policy: whether a key's call runs, waits for an approver, or is refused.
import type { ApiKey } from '../keys/key-store.ts';
import type { ToolDefinition } from '../tools/tool.ts';

export type PolicyDecision = 'allow' | 'approve' | 'deny';

/**
 * The first of the key's rules that matches decides; else the mode: `auto` runs everything,
 * `manual` asks for everything, `safe` asks for whatever can change the workspace or run code.
 */
export function approvalDecision(
  key: Pick<ApiKey, 'approvalMode' | 'rules'>,
  tool: Pick<ToolDefinition, 'name' | 'annotations' | 'actions'>,
  action: string | undefined,
): PolicyDecision {
  for (const rule of key.rules) {
    if (rule.tool === tool.name && (rule.action === undefined || rule.action === action)) return rule.decision;
  }
  switch (key.approvalMode) {
    case 'auto':
      return 'allow';
    case 'manual':
      return 'approve';
    case 'safe':
      return readsOnly(tool, action) ? 'allow' : 'approve';
  }
}

/** A tool with actions reads only in the actions it names so; any other tool as its annotations say. */
function readsOnly(tool: Pick<ToolDefinition, 'annotations' | 'actions'>, action: string | undefined): boolean {
  if (tool.actions) return action !== undefined && tool.actions.readOnly.includes(action);
  return tool.annotations.readOnlyHint;
}

/**
 * Whether the key's tool allowlist admits the call: the tool, or (for a tool with actions) the
 * `tool:action` entry; `action` is undefined until the arguments are parsed, when any entry of the tool will do.
 */
export function toolAllowed(
  key: Pick<ApiKey, 'tools'>,
  tool: Pick<ToolDefinition, 'name' | 'actions'>,
  action: string | undefined,
): boolean {
  if (key.tools === undefined || key.tools.includes(tool.name)) return true;
  if (!tool.actions) return false;
  if (action === undefined) return key.tools.some((entry) => entry.startsWith(`${tool.name}:`));
  return key.tools.includes(`${tool.name}:${action}`);
}
