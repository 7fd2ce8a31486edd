// Types for the workerd-only modules the storage tests import, limited to what they use.

declare module 'cloudflare:workers' {
  /** A Durable Object id; only passed back to the namespace. */
  export interface DurableObjectId {
    toString(): string;
  }

  export interface DurableObjectNamespace {
    newUniqueId(): DurableObjectId;
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
