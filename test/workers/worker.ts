// The Worker the storage tests run in: it only exports the Durable Object that lends them its storage.

import { DurableObject } from 'cloudflare:workers';

/** A SQLite-backed Durable Object whose `ctx.storage` the tests reach through `runInDurableObject`. */
export class SqlTestObject extends DurableObject {}

export default {
  fetch: (): Response => new Response('toolgate storage tests run through vitest, not over HTTP.', { status: 404 }),
};
