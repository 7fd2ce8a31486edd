// Manifest entries, directory listings and views derived from them, remembered in memory. Sound
// because one process owns the database and every commit goes through Manifest, which forgets the
// paths it touched (and so the listings that show them) as soon as it has committed, and so moves
// the workspace's generation on: a derived view is keyed by the generations it was computed at.

const MAX_ENTRIES = 200_000;
/**
 * The entries derived views may hold in all by default (about 150 bytes each for a search walk's
 * files, so some 60 MB): enough for the walk of a 100,000-file workspace and a few smaller ones.
 */
export const DEFAULT_VIEW_ENTRIES = 400_000;

export class EntryCache<Entry> {
  /** `null` records a path known to be absent. */
  private readonly entries = new Map<string, Entry | null>();
  /** A directory's children in path order; shared with callers, who must not change them. */
  private readonly listings = new Map<string, readonly Entry[]>();
  /** The entries the listings hold, bounded like `entries`. */
  private listed = 0;
  /** Per workspace incarnation, how many commits this cache has seen forgotten. */
  private readonly generations = new Map<string, number>();
  /** Values derived from workspaces' entries (a search's walk), keyed by the generations they saw. */
  private readonly views = new Map<string, { value: unknown; weight: number }>();
  /** The weight (entries held) of the views, up to maxViewEntries. */
  private viewed = 0;

  constructor(private readonly maxViewEntries = DEFAULT_VIEW_ENTRIES) {}

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

  /** Moves on with every commit of the workspace; a key made of it names one state of its entries. */
  generation(uid: string): number {
    return this.generations.get(uid) ?? 0;
  }

  view(key: string): unknown {
    return this.views.get(key)?.value;
  }

  /** Remembers a derived value standing for `weight` entries; views of past generations age out with the bound. */
  setView(key: string, value: unknown, entries: number): void {
    // Even an empty view counts, so the number of views is bounded too.
    const weight = entries + 1;
    if (weight > this.maxViewEntries) return;
    if (this.viewed + weight > this.maxViewEntries) {
      // Oldest first: a Map iterates in insertion order.
      for (const [old, held] of this.views) {
        this.views.delete(old);
        this.viewed -= held.weight;
        if (this.viewed + weight <= this.maxViewEntries) break;
      }
    }
    this.viewed += weight - (this.views.get(key)?.weight ?? 0);
    this.views.set(key, { value, weight });
  }

  /** Forgets the paths, their own listings (a directory removed or replaced) and their parents' listings. */
  forget(uid: string, paths: Iterable<string>): void {
    this.generations.set(uid, this.generation(uid) + 1);
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
