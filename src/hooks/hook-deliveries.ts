// A verified webhook delivery's way: its patch goes through apply_patch as the hook's owner key
// (scope, approvals, quota, the path guard, atomicity, metering), once per delivery id, and an
// applied patch is followed by a checkpoint when the hook asks for one.
import type { ToolCalls } from '../calls/tool-calls.ts';
import type { CallAnswer } from '../core/call-answer.ts';
import type { KeyLookup } from '../keys/key-lookup.ts';
import { errorBody, errorStatus, INTERNAL_MESSAGE, isToolError, ToolError } from '../core/errors.ts';
import { parseInput } from '../contract/parse-input.ts';
import type { Workspace } from '../workspace/workspace.ts';
import type { DeliveryOutcome, DeliveryRecords } from './delivery-records.ts';
import type { HookTarget } from './hook-store.ts';
import { consoleLog, type Log } from '../core/log.ts';
import { hookDeliveryInput } from '../contract/http-requests.ts';

/** Makes a checkpoint of a workspace: the workspace history's own operation. */
export interface Checkpoints {
  checkpoint(workspace: Workspace, message?: string): Promise<{ id: string; createdAt: string }>;
}

export interface Delivery {
  hook: HookTarget;
  /** The sender's delivery id: a repeat with the same one answers as the first did. */
  deliveryId: string | undefined;
  /** Reads the body: its parsed JSON and the bytes received (metered as the call's bytes in). */
  readBody: () => Promise<{ value: unknown; bytes: number }>;
}

export interface HookDeliveriesOptions {
  calls: Pick<ToolCalls, 'call'>;
  keys: Pick<KeyLookup, 'get'>;
  records: DeliveryRecords;
  /** Opens a workspace for its checkpoint. */
  workspaces: { open(id: string): Workspace };
  /** Without it no checkpoint is made; hooks are then configured without them. */
  history?: Checkpoints;
  log?: Log;
}

/** Answers that leave the delivery free to be tried again: nothing was applied and a retry may succeed. */
const RETRYABLE = new Set<number>([errorStatus.rate_limited, errorStatus.unavailable]);

export class HookDeliveries {
  constructor(private readonly options: HookDeliveriesOptions) {}

  /** Runs a delivery whose signature verified; never throws. */
  async deliver(delivery: Delivery): Promise<CallAnswer> {
    if (delivery.deliveryId === undefined) return (await this.run(delivery)).answer;
    return this.options.records
      .once(delivery.hook.id, delivery.deliveryId, () => this.run(delivery))
      .catch((error: unknown) => failure(error, this.log));
  }

  private async run(delivery: Delivery): Promise<DeliveryOutcome> {
    const { hook } = delivery;
    let owner;
    try {
      owner = await this.options.keys.get(hook.ownerKeyId);
    } catch (error) {
      return { answer: failure(error, this.log), keep: false };
    }
    if (owner === undefined) {
      const error = new ToolError(
        'forbidden',
        `The key that configured hook ${hook.id} was revoked, so its deliveries cannot run; an admin must configure it again with PUT /v1/hooks/${hook.id}.`,
        {
          hookId: hook.id,
        },
      );
      // Not kept: once an admin configures the hook again, the sender's redelivery applies.
      return { answer: failure(error, this.log), keep: false };
    }
    let commitMessage: string | undefined;
    const answer = await this.options.calls.call({
      key: owner,
      workspace: hook.workspace,
      tool: 'apply_patch',
      readArguments: async () => {
        const body = await delivery.readBody();
        const input = parseInput(hookDeliveryInput, body.value, 'delivery body');
        commitMessage = input.commitMessage;
        return { value: { patch: input.patch }, bytes: body.bytes };
      },
    });
    if (answer.status !== 200 || !hook.checkpoint || !this.options.history)
      return { answer, keep: !RETRYABLE.has(answer.status) };
    return { answer: await this.checkpoint(hook, answer, commitMessage), keep: true };
  }

  /** The apply's answer with the checkpoint made after it, or why none could be (the patch stays applied). */
  private async checkpoint(hook: HookTarget, applied: CallAnswer, message: string | undefined): Promise<CallAnswer> {
    const body = JSON.parse(applied.json) as Record<string, unknown>;
    try {
      const checkpoint = await this.options.history!.checkpoint(this.options.workspaces.open(hook.workspace), message);
      body.checkpoint = { id: checkpoint.id, createdAt: checkpoint.createdAt };
    } catch (error) {
      if (!isToolError(error)) this.log(`the checkpoint after a delivery to hook ${hook.id} failed`, error);
      body.checkpointError = isToolError(error)
        ? errorBody(error.code, error.message, error.details).error
        : { code: 'internal', message: INTERNAL_MESSAGE };
    }
    return { ...applied, json: JSON.stringify(body) };
  }

  private readonly log = (message: string, error?: unknown): void => {
    (this.options.log ?? consoleLog)(message, error);
  };
}

function failure(error: unknown, log: (message: string, error?: unknown) => void): CallAnswer {
  if (!isToolError(error)) {
    log('internal error in a webhook delivery', error);
    return { status: 500, json: JSON.stringify(errorBody('internal', INTERNAL_MESSAGE)), headers: {} };
  }
  return {
    status: error.status,
    json: JSON.stringify(errorBody(error.code, error.message, error.details)),
    headers: {},
  };
}
