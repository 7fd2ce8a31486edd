// Composition root of the Cloudflare home: the Worker routes each request to a Durable Object
// (one per workspace, a directory for keys and usage, a dispatcher for runner leases), blobs
// live in R2, and a Queue carries bash job ids. Runners lease over the same runner protocol.
import { worker } from '../src/cloudflare/worker-router.ts';

export { DirectoryObject } from '../src/cloudflare/directory-object.ts';
export { KeyObject } from '../src/cloudflare/key-object.ts';
export { DispatcherObject } from '../src/cloudflare/dispatcher-object.ts';
export { StoreFamilyObject } from '../src/cloudflare/store-family-object.ts';
export { WorkspaceObject } from '../src/cloudflare/workspace-object.ts';

export default worker;
