// The checks a tool call passes before anything is taken from its key's allowance: the key's
// workspace scope, its tool allowlist (before and after the action is known), the arguments' shape
// and the approval policy's decision, answered as one value the gate carries on.
import { approvalDecision, toolAllowed } from '../approvals/approval-policy.ts';
import { ToolError } from '../core/errors.ts';
import { canSeeWorkspace, type ApiKey } from '../keys/key-store.ts';
import type { CallIdentity } from '../metering/usage-meter.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import type { Workspace } from '../workspace/workspace.ts';
import type { Workspaces } from '../workspace/workspaces.ts';

/** A call as the checks see it: who calls which tool in which workspace, and its body, read once the tool is allowed. */
export interface CheckedRequest {
  key: ApiKey;
  workspace: string;
  tool: string;
  /** Reads the body: the parsed arguments and the bytes received. */
  readArguments: () => Promise<{ value: unknown; bytes: number }>;
}

/** A call past every check: the tool, its parsed arguments, the workspace, and whether an approver must decide. */
export interface Admitted {
  tool: ToolDefinition;
  args: unknown;
  workspace: Workspace;
  needsApproval: boolean;
  /** The key's rate limit a minute (0: none), taken once every check passed. */
  perMinute: number;
}

export interface CallChecks {
  tools: ToolRegistry;
  workspaces: Workspaces;
  /** Tool calls a minute for keys without their own limit; 0 means unlimited. */
  defaultRateLimitPerMinute: number;
}

/** Checks a call, filling in the identity's bytes and action as they become known; throws the first check's refusal. */
export async function checkCall(
  checks: CallChecks,
  request: CheckedRequest,
  identity: CallIdentity,
): Promise<Admitted> {
  const { key } = request;
  if (!canSeeWorkspace(key, request.workspace)) {
    throw new ToolError(
      'not_found',
      `Workspace ${request.workspace} does not exist; create it with PUT /v1/workspaces/${request.workspace}.`,
      { workspace: request.workspace },
    );
  }
  const tool = checks.tools.get(request.tool);
  if (!toolAllowed(key, tool, undefined)) throw notAllowed(tool.name, undefined);
  const body = await request.readArguments();
  identity.bytesIn = body.bytes;
  const args = checks.tools.parse(tool.name, body.value);
  identity.action = tool.actions?.of(args);
  if (!toolAllowed(key, tool, identity.action)) throw notAllowed(tool.name, identity.action);
  const decision = approvalDecision(key, tool, identity.action);
  if (decision === 'deny') throw notAllowed(tool.name, identity.action, 'a rule of this key denies it');
  const workspace = checks.workspaces.open(request.workspace);
  const perMinute = key.rateLimitPerMinute ?? checks.defaultRateLimitPerMinute;
  return { tool, args, workspace, needsApproval: decision === 'approve', perMinute };
}

function notAllowed(
  tool: string,
  action: string | undefined,
  why = "it is not in this key's tool allowlist",
): ToolError {
  const name = action === undefined ? tool : `${tool}:${action}`;
  return new ToolError(
    'tool_not_allowed',
    `This key may not call ${name}: ${why}. Use another tool or ask for a key that allows it.`,
    { tool, ...(action === undefined ? {} : { action }) },
  );
}
