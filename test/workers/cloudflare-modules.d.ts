// Types for the workerd-only modules the storage tests import, limited to what they use.

declare module 'cloudflare:workers' {
  /** A Durable Object id; only passed back to the namespace. */
  export interface DurableObjectId {
    toString(): string;
  }

  export interface DurableObjectNamespace {
    newUniqueId(): DurableObjectId;
    idFromName(name: string): DurableObjectId;
    get(id: DurableObjectId): DurableObjectStub;
  }

  /** A stub, only handed to `runInDurableObject`. */
  export interface DurableObjectStub {
    readonly id: DurableObjectId;
  }

  /** The bindings declared in test/workers/wrangler.toml. */
  export const env: {
    BUCKET: import('../../src/storage/r2-object-store.ts').R2BucketBinding;
    SQL_OBJECT: DurableObjectNamespace;
    DIRECTORY: DurableObjectNamespace;
    KEYS: DurableObjectNamespace;
    DISPATCHER: DurableObjectNamespace;
    WORKSPACES: DurableObjectNamespace;
    STORE_FAMILIES: DurableObjectNamespace;
    BLOBS: {
      put(key: string, value: string): Promise<unknown>;
      head(key: string): Promise<{ size: number } | null>;
      list(options: { prefix?: string; cursor?: string }): Promise<{
        objects: { key: string }[];
        truncated: boolean;
        cursor?: string;
      }>;
    };
  };

  export abstract class DurableObject {
    constructor(ctx: unknown, env: unknown);
  }
}

declare module 'cloudflare:test' {
  /** Runs `callback` inside the object `stub` points to, with that object's state. */
  export function runInDurableObject<R>(
    stub: import('cloudflare:workers').DurableObjectStub,
    callback: (
      instance: unknown,
      state: { storage: import('../../src/storage/durable-object-sql-database.ts').DurableObjectStorageBinding },
    ) => R | Promise<R>,
  ): Promise<R>;
}

declare module 'cloudflare:test' {
  /** Runs the object's alarm now, if one is set; false when none was. */
  export function runDurableObjectAlarm(stub: import('cloudflare:workers').DurableObjectStub): Promise<boolean>;

  /** Service binding to the test Worker's default export (toolgate's Worker router). */
  export const SELF: { fetch(input: string, init?: RequestInit): Promise<Response> };

  /** A batch of Queue messages, as the Queue hands them to a consumer. */
  export function createMessageBatch<Body>(
    queueName: string,
    messages: { id: string; timestamp: Date; attempts: number; body: Body }[],
  ): {
    messages: readonly { body: Body; ack(): void; retry(): void }[];
  };

  /** What a consumer did with each message of a batch it was given. */
  export function getQueueResult(
    batch: unknown,
    context: unknown,
  ): Promise<{ explicitAcks: string[]; retryMessages: { msgId: string }[] }>;

  export function createExecutionContext(): unknown;
}
