// Who reads a store that workspaces in several databases share. A fork on the Cloudflare home puts
// the new workspace in another object, with a database of its own, reading the same contents in R2:
// neither object can see the other's references, so neither may delete from the store alone. The
// home keeps the family's readers elsewhere (an object per store), which deletes the store with its
// last reader and sweeps single contents no reader needs (family-sweep.ts).

/** A workspace incarnation reading a shared store: its uid, and the workspace name its database answers to. */
export interface StoreReader {
  uid: string;
  workspace: string;
}

export interface StoreFamilies {
  /**
   * Adds workspace incarnations to the readers of `store`: a fork across databases calls it with
   * its source and the fork before it reads what it sends. Refused (`conflict`) once the store is
   * being deleted.
   */
  join(store: string, readers: readonly StoreReader[]): Promise<void>;
  /** Removes a reader (by uid); the last to leave has the store deleted. Removing one that is not there is no error. */
  leave(store: string, reader: string): Promise<void>;
  /** Tells the family that what a reader refers to changed, so a sweep is planned. */
  changed(store: string): Promise<void>;
  /**
   * Asks that a content a sweep has doomed be kept, because a reader is about to name it: resolves
   * once it is kept, or once its deletion has landed (the reader then writes it again).
   */
  rescue(store: string, hash: string): Promise<void>;
}
