// The workspace object's side of a webhook delivery on the Cloudflare home: the directory verified
// it and sends it here, to the object holding the hook's workspace, where it runs and is recorded.
import { forwardedDeliverySchema } from '../contract/object-calls.ts';
import { parseInput } from '../contract/parse-input.ts';
import { ToolError } from '../core/errors.ts';
import type { HookDeliveries } from '../hooks/hook-deliveries.ts';
import { answerResponse } from '../http/hook-routes.ts';
import { parseJsonBytes, readBodyBytes } from '../http/json-body.ts';

/** The internal path (under INTERNAL_PREFIX) a verified delivery is sent to. */
export const HOOK_DELIVERY_PATH = 'hook-delivery';
/** Names the hook (without its secret) and the delivery id; the body is the delivery's raw body. */
export const HOOK_DELIVERY_HEADER = 'x-toolgate-hook-delivery';
/** The answer headers a delivery's answer carries across. */
export const HOOK_ANSWER_HEADERS = ['retry-after', 'x-toolgate-replayed'] as const;

/** Runs a delivery the directory verified; answers exactly what the delivery answers. */
export async function receiveHookDelivery(
  deliveries: HookDeliveries,
  request: Request,
  maxBodyBytes: number,
): Promise<Response> {
  const header = request.headers.get(HOOK_DELIVERY_HEADER);
  if (header === null)
    throw new ToolError('invalid_argument', `An internal hook delivery needs the ${HOOK_DELIVERY_HEADER} header.`);
  const { hook, deliveryId } = parseInput(
    forwardedDeliverySchema,
    parseHeader(header),
    `${HOOK_DELIVERY_HEADER} header of an internal hook delivery`,
  );
  const body = await readBodyBytes(request, maxBodyBytes);
  const contentType = request.headers.get('content-type');
  const answer = await deliveries.deliver({
    hook,
    deliveryId,
    readBody: async () => ({ value: parseJsonBytes(body, contentType), bytes: body.byteLength }),
  });
  return answerResponse(answer);
}

function parseHeader(header: string): unknown {
  try {
    return JSON.parse(header);
  } catch {
    throw new ToolError(
      'invalid_argument',
      `The ${HOOK_DELIVERY_HEADER} header of an internal hook delivery is not JSON.`,
    );
  }
}
