// The Worker the workerd tests run in: the object that lends the storage tests its storage, and
// toolgate's own Cloudflare home (its objects, fetch and queue handlers) for the dispatch tests.

import { DurableObject } from 'cloudflare:workers';
import { worker } from '../../src/cloudflare/worker-router.ts';

export { DirectoryObject } from '../../src/cloudflare/directory-object.ts';
export { KeyObject } from '../../src/cloudflare/key-object.ts';
export { DispatcherObject } from '../../src/cloudflare/dispatcher-object.ts';
export { StoreFamilyObject } from '../../src/cloudflare/store-family-object.ts';
export { WorkspaceObject } from '../../src/cloudflare/workspace-object.ts';

/** A SQLite-backed Durable Object whose `ctx.storage` the tests reach through `runInDurableObject`. */
export class SqlTestObject extends DurableObject {}

export default worker;
