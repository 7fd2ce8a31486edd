// The interpreter's own files, as just-bash writes them into a filesystem it is given: a stub in
// /bin and /usr/bin for each of its commands, /dev (null, zero, std*) and /proc (version, self/*).
// Its constructor writes them (about 180 files) on every command; the edge builds them once per
// thread or isolate, and each command's filesystem gets its own copy (EdgeFs.addLayout).
import type { Bash, FileContent } from 'just-bash';
import { lexical, toBytes } from './edge-fs-paths.ts';
import { EdgeFs } from './edge-fs.ts';

/** A filesystem with the building calls just-bash's constructor looks for (mkdirSync and writeFileSync), so that it writes its layout there. */
class LayoutFs extends EdgeFs {
  writeFileSync(path: string, content: FileContent): void {
    this.makeParents(lexical(path));
    this.write(lexical(path), toBytes(content), false, path);
  }

  /** A file whose content `load` gives on first read (/proc/self/status, whose loader gives text). */
  writeFileLazy(path: string, load: () => Promise<FileContent> | FileContent): void {
    const normalized = lexical(path);
    this.makeParents(normalized);
    const at = this.locate(normalized, false, 'open', path);
    this.holder(at, path).children.set(
      at.name,
      this.fileNode(undefined, async () => toBytes(await load()), undefined),
    );
  }
}

/**
 * The files an interpreter made as `Bash` makes it (the same commands registered) puts in its
 * filesystem. Made with no options but the filesystem: those that change the layout (python,
 * javascript, network: more commands) are ones the edge never gives.
 */
export function interpreterLayout(Interpreter: typeof Bash): EdgeFs {
  const layout = new LayoutFs();
  new Interpreter({ fs: layout, cwd: '/' });
  return layout;
}
