// What createApp is built from: the injected ports and services, and the Hono environment every route sees.
import type { ArrivingBytes } from '../core/arriving-bytes.ts';
import type { ChunkedAnswer } from '../core/body-pieces.ts';
import type { CallAnswer, ToolCalls } from '../calls/tool-calls.ts';
import type { WorkspaceHistory } from '../history/workspace-history.ts';
import type { HookStore, HookTarget } from '../hooks/hook-store.ts';
import type { ApiKey } from '../keys/key-store.ts';
import type { UsageMeter } from '../metering/usage-meter.ts';
import type { ProcessStore } from '../processes/process-store.ts';
import type { ToolLimits } from '../tools/tool.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { WorkspaceInfo, Workspaces } from '../workspace/workspaces.ts';

export interface AppLimits extends ToolLimits {
  /** The largest request body accepted, counted on the bytes received. */
  maxBodyBytes: number;
}

/** The app's limits out of a home's settings, which name them alike (NodeConfig, the Worker's settings). */
export function appLimitsOf(settings: AppLimits): AppLimits {
  return {
    maxBodyBytes: settings.maxBodyBytes,
    maxFileBytes: settings.maxFileBytes,
    defaultReadMaxChars: settings.defaultReadMaxChars,
    edgeMemoryBytes: settings.edgeMemoryBytes,
  };
}

/** Who a presented secret belongs to: the key store itself, or a home's way of asking it. */
export interface KeyAuthority {
  authenticate(secret: string): Promise<ApiKey | undefined>;
}

export interface AppDeps {
  workspaces: Workspaces;
  keys: KeyAuthority;
  tools: ToolRegistry;
  /** Every tool call goes through it: scope, approvals, quota, metering. */
  calls: ToolCalls;
  meter: UsageMeter;
  limits: AppLimits;
  /** Durable bash processes and their job queue; without them bash is unavailable and no runner routes exist. */
  processes?: ProcessStore;
  /** Checkpoints, diff, restore and import (docs/api.md History); without it no history routes exist. */
  history?: WorkspaceHistory;
  /** Webhooks: their configurations and how a verified delivery runs; without them no hook routes exist. */
  hooks?: HookServices;
  /**
   * Makes a fork where the new workspace's database is another (the Cloudflare home: another
   * object's); without it `workspaces.fork` makes it in this one.
   */
  forkWorkspace?: (from: string, to: string) => Promise<WorkspaceInfo>;
  /** Called with unexpected failures (the client sees only `internal`). */
  onInternalError?: (error: unknown) => void;
  /** How long an event stream stays quiet before a keep-alive comment (default KEEP_ALIVE_MS). */
  streamKeepAliveMs?: number;
  /**
   * Reads a request's body of a declared length (within the body limit) as it arrives, into one
   * array, more cheaply than `Request.arrayBuffer()`, where the home can (the Node home: straight
   * from the socket), given the request's hono bindings; undefined where it cannot. Archive
   * uploads use it, to unpack while the body arrives.
   */
  readBody?: (env: unknown, length: number) => ArrivingBytes | undefined;
  /**
   * Sends an answer whose body is made in chunks straight to the connection, given the request's
   * hono bindings, where the home can (the Node home: its response, each chunk reused once
   * written); undefined where it cannot, and the route answers a stream. Archive downloads use it.
   */
  sendBody?: (env: unknown, answer: ChunkedAnswer, onError?: (error: unknown) => void) => Response | undefined;
  /** 'none' when commands run unsandboxed on purpose (TOOLGATE_SANDBOX=none): /healthz says so. */
  sandbox?: 'bwrap' | 'none';
}

export type AppEnv = { Variables: { key: ApiKey } };

/** A delivery whose signature verified, as it goes to where its hook's workspace is. */
export interface SignedDelivery {
  hook: HookTarget;
  deliveryId: string | undefined;
  body: Uint8Array;
  contentType: string | null;
}

/** Runs a verified delivery: in this process, or in the part of a home that holds the workspace. */
export interface HookDeliverer {
  deliver(delivery: SignedDelivery): Promise<CallAnswer>;
}

/** Webhooks: their configurations, and how a verified delivery runs. */
export interface HookServices {
  hooks: Pick<HookStore, 'get' | 'put' | 'list' | 'delete'>;
  deliverer: HookDeliverer;
  /** Whether deliveries can make checkpoints here; without, `checkpoint: true` is refused. */
  checkpoints: boolean;
  now?: () => number;
}
