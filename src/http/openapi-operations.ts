// The operations of the HTTP contract in the order the OpenAPI document lists them, each area's taken from its own module.
import type { ToolDefinition } from '../tools/tool.ts';
import { accountOperations } from './account-operations.ts';
import { approvalOperations } from './approval-operations.ts';
import { archiveOperations } from './archive-operations.ts';
import { hookOperations } from './hook-operations.ts';
import { historyOperations } from './history-operations.ts';
import type { Operation } from './openapi-types.ts';
import { runnerOperations } from './runner-operations.ts';
import { serviceOperations } from './service-operations.ts';
import { logStreamOperations } from './stream-operations.ts';
import { mcpOperation, toolOperations } from './tool-operations.ts';
import { workspaceOperations } from './workspace-operations.ts';

/** Every operation, in the order the document lists them; the runner protocol only where the app serves it. */
export function contractOperations(tools: readonly ToolDefinition[], runnerProtocol: boolean): Operation[] {
  return [
    ...serviceOperations(),
    ...workspaceOperations(),
    ...archiveOperations(),
    ...historyOperations(),
    ...toolOperations(tools),
    ...(runnerProtocol ? logStreamOperations() : []),
    ...approvalOperations(),
    ...accountOperations(),
    mcpOperation(),
    ...hookOperations(),
    ...(runnerProtocol ? runnerOperations() : []),
  ];
}
