// Manifest entries remembered in memory. Sound because one process owns the database and every
// commit goes through Manifest, which forgets the paths it touched as soon as it has committed.

const MAX_ENTRIES = 200_000;

export class EntryCache<Entry> {
  /** `null` records a path known to be absent. */
  private readonly entries = new Map<string, Entry | null>();

  get(uid: string, path: string): Entry | null | undefined {
    return this.entries.get(`${uid}\u0000${path}`);
  }

  set(uid: string, path: string, entry: Entry | null): void {
    // Clearing all at the bound is crude but O(1) per access; a full cache is rebuilt by reads.
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(`${uid}\u0000${path}`, entry);
  }

  forget(uid: string, paths: Iterable<string>): void {
    for (const path of paths) this.entries.delete(`${uid}\u0000${path}`);
  }
}
