// Content-addressed, immutable file contents of one workspace incarnation in the object store.
import { ToolError } from '../core/errors.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { deletePrefix } from '../storage/object-store.ts';
import { sha256Hex } from './content-hash.ts';

export class BlobStore {
  constructor(private readonly objects: ObjectStore) {}

  /** Stores the bytes under their SHA-256 and returns it; storing the same bytes twice is harmless. */
  async put(workspaceUid: string, bytes: Uint8Array): Promise<string> {
    const hash = await sha256Hex(bytes);
    await this.objects.put(blobKey(workspaceUid, hash), bytes);
    return hash;
  }

  async get(workspaceUid: string, hash: string): Promise<Uint8Array> {
    const object = await this.objects.get(blobKey(workspaceUid, hash));
    if (!object) {
      throw new ToolError('unavailable', 'A file content blob is missing from the object store; retry, and report it if it persists.', { blob: hash });
    }
    return object.body;
  }

  /** Removes every blob of a deleted workspace incarnation. */
  async deleteAll(workspaceUid: string): Promise<void> {
    await deletePrefix(this.objects, `ws/${workspaceUid}/`);
  }
}

function blobKey(workspaceUid: string, hash: string): string {
  return `ws/${workspaceUid}/blobs/${hash.slice(0, 2)}/${hash}`;
}
