// Manifest entries and directory listings remembered in memory. Sound because one process owns the
// database and every commit goes through Manifest, which forgets the paths it touched (and so the
// listings that show them) as soon as it has committed.

const MAX_ENTRIES = 200_000;

export class EntryCache<Entry> {
  /** `null` records a path known to be absent. */
  private readonly entries = new Map<string, Entry | null>();
  /** A directory's children in path order; shared with callers, who must not change them. */
  private readonly listings = new Map<string, readonly Entry[]>();
  /** The entries the listings hold, bounded like `entries`. */
  private listed = 0;

  get(uid: string, path: string): Entry | null | undefined {
    return this.entries.get(`${uid}\u0000${path}`);
  }

  set(uid: string, path: string, entry: Entry | null): void {
    // Clearing all at the bound is crude but O(1) per access; a full cache is rebuilt by reads.
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(`${uid}\u0000${path}`, entry);
  }

  children(uid: string, directory: string): readonly Entry[] | undefined {
    return this.listings.get(`${uid}\u0000${directory}`);
  }

  setChildren(uid: string, directory: string, children: readonly Entry[]): void {
    if (children.length > MAX_ENTRIES / 4) return;
    if (this.listed + children.length > MAX_ENTRIES) {
      this.listings.clear();
      this.listed = 0;
    }
    const key = `${uid}\u0000${directory}`;
    this.listed += children.length - (this.listings.get(key)?.length ?? 0);
    this.listings.set(key, Object.freeze([...children]));
  }

  /** Forgets the paths, their own listings (a directory removed or replaced) and their parents' listings. */
  forget(uid: string, paths: Iterable<string>): void {
    for (const path of paths) {
      this.entries.delete(`${uid}\u0000${path}`);
      this.dropListing(`${uid}\u0000${path}`);
      const slash = path.lastIndexOf('/');
      this.dropListing(`${uid}\u0000${slash === -1 ? '' : path.slice(0, slash)}`);
    }
  }

  private dropListing(key: string): void {
    const listing = this.listings.get(key);
    if (listing === undefined) return;
    this.listed -= listing.length;
    this.listings.delete(key);
  }
}
