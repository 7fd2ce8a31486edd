// The directory's side of a webhook delivery on the Cloudflare home: hooks are configured and
// verified in the directory (the Worker cannot tell a hook's workspace from its URL), and a
// verified delivery is handed to its workspace's object, which runs it as the hook's owner key.
import type { ForwardedDelivery } from '../contract/object-calls.ts';
import type { CallAnswer } from '../core/call-answer.ts';
import { errorBody, ToolError } from '../core/errors.ts';
import type { HookDeliverer, SignedDelivery } from '../http/app-deps.ts';
import { INTERNAL_HEADER, INTERNAL_PREFIX, workspaceObject, type Env } from './bindings.ts';
import { HOOK_ANSWER_HEADERS, HOOK_DELIVERY_HEADER, HOOK_DELIVERY_PATH } from './hook-delivery-route.ts';
import { WORKSPACE_HEADER } from './workspace-object.ts';

export class WorkspaceHookForwarder implements HookDeliverer {
  constructor(private readonly env: Env) {}

  async deliver(delivery: SignedDelivery): Promise<CallAnswer> {
    const forwarded: ForwardedDelivery = { hook: delivery.hook, deliveryId: delivery.deliveryId };
    // The workspace header enters the workspace in the directory's index, so usage listings count the delivery.
    const headers: Record<string, string> = {
      [INTERNAL_HEADER]: '1',
      [HOOK_DELIVERY_HEADER]: JSON.stringify(forwarded),
      [WORKSPACE_HEADER]: delivery.hook.workspace,
    };
    if (delivery.contentType !== null) headers['content-type'] = delivery.contentType;
    let response: Response;
    try {
      const request = new Request(`https://toolgate.internal${INTERNAL_PREFIX}${HOOK_DELIVERY_PATH}`, {
        method: 'POST',
        headers,
        body: delivery.body,
      });
      response = await workspaceObject(this.env, delivery.hook.workspace).fetch(request);
    } catch (error) {
      const failure = new ToolError(
        'unavailable',
        `The workspace of this hook could not be reached (${(error as Error).message}); send the delivery again.`,
      );
      return { status: failure.status, json: JSON.stringify(errorBody(failure.code, failure.message)), headers: {} };
    }
    const answerHeaders: Record<string, string> = {};
    for (const name of HOOK_ANSWER_HEADERS) {
      const value = response.headers.get(name);
      if (value !== null) answerHeaders[name] = value;
    }
    return { status: response.status, json: await response.text(), headers: answerHeaders };
  }
}
