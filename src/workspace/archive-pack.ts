// A workspace directory as a tar stream: entries in path order, each file's content read as its turn comes.
import { createTarPacker, type TarHeader } from 'modern-tar';
import { relativeLinkTarget } from '../core/link-target.ts';
import type { ManifestEntry } from './manifest.ts';
import type { Workspace } from './workspace.ts';

/** The manifest keeps no modes, so every file is 0644, every directory 0755, every link 0777 (as `ln -s` makes them). */
const FILE_MODE = 0o644;
const DIRECTORY_MODE = 0o755;
const LINK_MODE = 0o777;

/**
 * The tar of everything below the resolved directory `root`, named relative to it: directories
 * (empty ones too) as directory entries, symlinks as links, files with their bytes. The entries
 * are those of the moment it is called; contents are read one blob at a time as the reader takes
 * them (blobs never change), so memory holds about one file, whatever the workspace's size.
 */
export function packArchive(workspace: Workspace, root: string, mtime: Date): ReadableStream<Uint8Array> {
  const entries = workspace.entriesBelow(root);
  const { readable, controller } = createTarPacker();
  const name = (path: string) => (root === '' ? path : path.slice(root.length + 1));
  void (async () => {
    try {
      for (const entry of entries) {
        const header = tarHeader(entry, name(entry.path), mtime);
        const content = entry.type === 'file' ? await workspace.readBytes(entry.path, entry) : undefined;
        const body = controller.add(header);
        if (content === undefined || content.byteLength === 0) {
          await body.close();
          continue;
        }
        // The write waits while the reader is more than the packer's buffer behind.
        const writer = body.getWriter();
        await writer.write(content);
        await writer.close();
      }
      controller.finalize();
    } catch (error) {
      // The reader went away (its stream is then cancelled) or a blob could not be read: the stream ends in error.
      controller.error(error);
    }
  })();
  return readable;
}

function tarHeader(entry: ManifestEntry, name: string, mtime: Date): TarHeader {
  if (entry.type === 'dir') return { name: `${name}/`, type: 'directory', size: 0, mode: DIRECTORY_MODE, mtime };
  if (entry.type === 'symlink')
    return { name, type: 'symlink', size: 0, linkname: diskTarget(entry), mode: LINK_MODE, mtime };
  return { name, type: 'file', size: entry.size, mode: FILE_MODE, mtime };
}

/**
 * A link's target as it must read on a disk, where a leading `/` is the host's root: a relative
 * target as stored, an absolute one (workspace-absolute here) made relative to the link, or, when
 * it leaves the workspace, climbing out of the root, so that no archive of ours names a host path.
 */
function diskTarget(entry: ManifestEntry): string {
  const target = entry.target ?? '';
  if (!target.startsWith('/')) return target;
  const depth = entry.path.split('/').length - 1;
  return relativeLinkTarget(entry.path, target) ?? `${'../'.repeat(depth)}${target.replace(/^\/+/, '')}`;
}
