// An overlay's shape, shared by overlay.ts (mount and layers) and overlay-upper.ts (reading and applying the upper layer).

/** How an overlay can be mounted on this host, as the probe found it. */
export interface OverlaySupport {
  /** 'root' mounts in a private mount namespace; 'user-namespace' inside a user namespace of its own (`userxattr`). */
  kind: 'root' | 'user-namespace';
  unshare: string;
  mount: string;
  shell: string;
  getfattr: string;
  /** Where the overlay keeps opacity and redirects: `trusted.overlay.` as root, `user.overlay.` in a user namespace. */
  attributePrefix: string;
  /** Whether renaming a directory of the lower layer works in place (else it fails with EXDEV and `mv` copies). */
  renamesDirectories: boolean;
}

/** One job's overlay directories, all on the runner's own disk. */
export interface OverlayLayers {
  lower: string;
  upper: string;
  work: string;
  /** Where the overlay is mounted inside the job's mount namespace; bound at /workspace. */
  merged: string;
  /** Where the lower directories the command renamed wait while the upper layer is applied. */
  stash: string;
  /** The job's directory holding all of the above but the lower layer. */
  dir: string;
}
