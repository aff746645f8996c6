import { mkdirSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { makeDirectoriesSync } from '../../shared/make-directories.ts';
import { FolderFs, isInternal, parentOf } from '../files/folder-fs.ts';
import { failed } from './errors.ts';

/*
 * Where a folder's versions are kept, as lib/versioner/util.go versionerFsFromFolderCfg puts them:
 * `<folder>/.stversions`, or versioning.fsPath (absolute, or relative to the folder root, so `../x`
 * may lie outside it). The versions are a FolderFs of their own, rooted there: the folder's FolderFs
 * refuses to write its internal names, and the versions tree is never walked through a symlink.
 *
 * A root inside the folder under a name a device may write (a custom fsPath such as `versions`) is
 * reached through the folder's FolderFs each time, so that a device cannot make it, or a parent of
 * it, a symlink to elsewhere: Syncthing follows such a symlink. `.stversions` (internal, never
 * written for a device) and a root outside the folder (the user's own) may be symlinks, as in
 * Syncthing, whose versions root "is ok to be a symlink" (util.go retrieveVersions).
 */
export class VersionsRoot {
  /** The absolute path of the versions root. */
  readonly path: string;
  readonly #fs: FolderFs;
  readonly #folderFs: FolderFs;
  // Its name in the folder when a device could have written it, checked before each use.
  readonly #inFolder: string | undefined;

  constructor(folderFs: FolderFs, fsPath: string, markerName: string) {
    const folderRoot = resolve(folderFs.root);
    this.path = fsPath === '' ? resolve(folderRoot, '.stversions') : resolve(folderRoot, fsPath);
    this.#fs = new FolderFs(this.path, markerName);
    this.#folderFs = folderFs;
    const name = relative(folderRoot, this.path);
    const outside = name === '..' || name.startsWith('../') || isAbsolute(name);
    this.#inFolder = outside || name === '' || isInternal(name, markerName) ? undefined : name;
  }

  /** The versions, or undefined when the root is missing (Syncthing's Stat(".") of the versions fs). */
  existing(): FolderFs | undefined {
    if (this.#inFolder !== undefined) {
      const dir = this.#folderFs.directoryOrNone(this.#inFolder);
      if (!dir) return undefined;
      dir.close();
      return this.#fs;
    }
    const stats = statSync(this.path, { throwIfNoEntry: false });
    if (stats && !stats.isDirectory())
      throw new Error(`the versions directory ${this.path} is not a directory`);
    return stats ? this.#fs : undefined;
  }

  /** The versions, their root made (mode 0755, with its missing parents) when missing: util.go archiveFile. */
  made(): FolderFs {
    const fs = this.existing();
    if (fs) return fs;
    try {
      if (this.#inFolder !== undefined) {
        // The parents made through the folder's FolderFs, never through a symlink; the root checked after.
        this.#folderFs.directory(parentOf(this.#inFolder), true).close();
        mkdirSync(this.path, { mode: 0o755 });
      } else {
        makeDirectoriesSync(this.path, 0o755);
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw failed(`making the versions directory ${this.path}`, error);
      }
    }
    const made = this.existing();
    if (!made) throw new Error(`the versions directory ${this.path} is missing after it was made`);
    return made;
  }
}
