// The approval policy: whether a key's call runs, waits for an approver, or is refused.
import type { ApiKey } from '../keys/key-store.ts';
import type { ToolDefinition } from '../tools/tool.ts';

export type PolicyDecision = 'allow' | 'approve' | 'deny';

/** bash actions that only read: `safe` lets them run without approval. */
const READ_ONLY_BASH_ACTIONS = new Set(['status', 'logs', 'list']);

/**
 * The first of the key's rules that matches decides; else the mode: `auto` runs everything,
 * `manual` asks for everything, `safe` asks for whatever can change the workspace or run code.
 */
export function approvalDecision(key: Pick<ApiKey, 'approvalMode' | 'rules'>, tool: Pick<ToolDefinition, 'name' | 'annotations'>, action: string | undefined): PolicyDecision {
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

function readsOnly(tool: Pick<ToolDefinition, 'name' | 'annotations'>, action: string | undefined): boolean {
  if (tool.name === 'bash') return action !== undefined && READ_ONLY_BASH_ACTIONS.has(action);
  return tool.annotations.readOnlyHint;
}

/** Whether the key's tool allowlist admits the call; `action` is undefined until bash's arguments are parsed. */
export function toolAllowed(key: Pick<ApiKey, 'tools'>, tool: string, action: string | undefined): boolean {
  if (key.tools === undefined || key.tools.includes(tool)) return true;
  if (tool !== 'bash') return false;
  if (action === undefined) return key.tools.some((entry) => entry.startsWith('bash:'));
  return key.tools.includes(`bash:${action}`);
}
