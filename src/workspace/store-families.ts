// Who reads a store that workspaces in several databases share. A fork on the Cloudflare home puts
// the new workspace in another object, with a database of its own, reading the same contents in R2:
// neither object can see the other's references, so neither may delete the store. The home keeps
// the family's readers elsewhere (an object per store) and deletes the store with its last reader.

export interface StoreFamilies {
  /**
   * Adds workspace incarnations (by uid) to the readers of `store`: a fork across databases calls
   * it with its source and the fork before it sends anything. Refused (`conflict`) once the store
   * is being deleted.
   */
  join(store: string, readers: readonly string[]): Promise<void>;
  /** Removes a reader; the last to leave has the store deleted. Removing one that is not there is no error. */
  leave(store: string, reader: string): Promise<void>;
}
