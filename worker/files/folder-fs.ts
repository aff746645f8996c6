import {
  type BigIntStats,
  closeSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  renameSync,
  type Stats,
} from 'node:fs';
import { chmod, lutimes, mkdir, readdir, rename, rmdir, symlink, unlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { closeFd, lstatOrNone, openFd } from './fd.ts';

/*
 * The one door to a folder's files: every operation on them (the scan's, the puller's, the block
 * server's) names a file relative to the folder, and goes through here. As Syncthing's rooted
 * filesystem and its TraversesSymlink check (lib/fs/basicfs.go, lib/osutil/traversessymlink.go), a
 * name is refused when one of its parents is a symlink or not a directory, so that nothing a device
 * announces (a symlink `link -> /anywhere`, then `link/file`) can reach outside the folder.
 *
 * On Linux the check and the use are one: the parents are opened one at a time, each inside the one
 * before, with O_NOFOLLOW (through /proc/self/fd/N, which stands for an open directory as openat's
 * first argument would: Node has no openat), and the operation is done inside the last one; a parent
 * swapped for a symlink between the check and the use is then never followed. Where /proc is not
 * mounted, each parent is checked with lstat just before the operation, as Syncthing checks it, and a
 * swap in between is not seen.
 */

const PROC_FD = existsSync('/proc/self/fd') ? '/proc/self/fd' : undefined;
const { O_RDONLY, O_RDWR, O_WRONLY, O_CREAT, O_EXCL, O_TRUNC, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } =
  constants;
const DIRECTORY = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
// Linux's O_PATH, which Node's constants leave out; without /proc, plain O_RDONLY.
const O_PATH = PROC_FD ? 0o10000000 : O_RDONLY;
const FLAGS: Record<OpenFlags, number> = {
  // A pipe where a file was is not waited on: reading it fails at once.
  r: O_RDONLY | O_NONBLOCK,
  'r+': O_RDWR,
  'wx+': O_RDWR | O_CREAT | O_EXCL,
  w: O_WRONLY | O_CREAT | O_TRUNC,
};
export type OpenFlags = 'r' | 'r+' | 'wx+' | 'w';

/** Names Syncthing keeps for itself at a folder's root (lib/fs/filesystem.go IsInternal). */
const INTERNAL_NAMES = ['.stfolder', '.stignore', '.stversions'];

/** A folder's configured path as a directory: `~` is the home directory (Syncthing's ExpandTilde). */
export function folderRoot(path: string): string {
  return path === '~' ? homedir() : path.startsWith('~/') ? join(homedir(), path.slice(2)) : path;
}

/** Syncthing's temporary name for a file being pulled (lib/fs/tempname.go), where a resumed pull reads. */
export function temporaryName(name: string): string {
  const slash = name.lastIndexOf('/');
  return `${name.slice(0, slash + 1)}.syncthing.${name.slice(slash + 1)}.tmp`;
}

/** The directory a name is in, '' for the folder's root. */
export function parentOf(name: string): string {
  return name.slice(0, Math.max(0, name.lastIndexOf('/')));
}

// `name`'s base name, in the directory that holds the entry `at`.
function sibling(at: string, name: string): string {
  return `${at.slice(0, at.lastIndexOf('/'))}/${name.slice(name.lastIndexOf('/') + 1)}`;
}

/** Whether a base name is one of Syncthing's temporary names (lib/fs/tempname.go IsTemporary). */
export function isTemporary(name: string): boolean {
  const base = name.slice(name.lastIndexOf('/') + 1);
  return base.startsWith('.syncthing.') && base.endsWith('.tmp');
}

/**
 * Whether a name is the folder's own (its marker, `.stignore`, `.stversions`, or below them) or a
 * temporary file: never taken from another device, never written or deleted on its word.
 */
export function isInternal(name: string, markerName = '.stfolder'): boolean {
  const top = name.split('/', 1)[0] as string;
  return INTERNAL_NAMES.includes(top) || top === markerName || isTemporary(name);
}

/** A name whose parent is a symlink (Syncthing's TraversesSymlinkError). */
export class TraversesSymlinkError extends Error {
  override name = 'TraversesSymlinkError';
  readonly code = 'ETRAVERSES';
  constructor(path: string) {
    super(`traverses symlink: ${path}`);
  }
}

/** A name whose parent is not a directory (Syncthing's NotADirectoryError). */
export class NotADirectoryError extends Error {
  override name = 'NotADirectoryError';
  readonly code = 'ENOTDIR';
  constructor(path: string) {
    super(`not a directory: ${path}`);
  }
}

/** An internal name (see isInternal) that something asked to write or delete. */
export class InternalNameError extends Error {
  override name = 'InternalNameError';
  readonly code = 'EINTERNAL';
  constructor(name: string) {
    super(`${JSON.stringify(name)} is internal to the folder and is never written for another device`);
  }
}

/** A parent directory held open for one operation; `at` names the entry inside it. */
interface Parent {
  at: string;
  close(): void;
}

/** The files of one folder, by their names relative to it. */
export class FolderFs {
  readonly root: string;
  readonly #markerName: string;

  constructor(path: string, markerName = '.stfolder') {
    this.root = folderRoot(path);
    this.#markerName = markerName;
  }

  /** What is at `name`, not following a symlink there; undefined when nothing is. */
  lstat(name: string): Promise<Stats | undefined> {
    return this.#in(name, (at) => lstatOrNone(at), { missingParent: () => undefined });
  }

  lstatSync(name: string): Stats | undefined {
    const parent = this.#parentOrNone(name);
    if (!parent) return undefined;
    try {
      return lstatSync(parent.at, { throwIfNoEntry: false });
    } finally {
      parent.close();
    }
  }

  /** lstatSync with times in nanoseconds, as the scan reads them. */
  lstatBigSync(name: string): BigIntStats | undefined {
    const parent = this.#parentOrNone(name);
    if (!parent) return undefined;
    try {
      return lstatSync(parent.at, { bigint: true, throwIfNoEntry: false });
    } finally {
      parent.close();
    }
  }

  /** Opens a file (never a symlink: O_NOFOLLOW); the descriptor is the caller's to close. */
  open(name: string, flags: OpenFlags, mode = 0o666): Promise<number> {
    return this.#in(name, (at) => openFd(at, FLAGS[flags] | O_NOFOLLOW, mode), { write: flags !== 'r' });
  }

  openSync(name: string, flags: OpenFlags): number {
    const parent = this.#parentSync(name, flags !== 'r');
    try {
      return openSync(parent.at, FLAGS[flags] | O_NOFOLLOW);
    } finally {
      parent.close();
    }
  }

  /**
   * A path that stands for the open file `fd` for as long as it stays open, for another thread to
   * open again (the hashing threads): the file itself, whatever its name comes to lead to.
   */
  static pathOf(fd: number, fallback: string): string {
    return PROC_FD ? `${PROC_FD}/${fd}` : fallback;
  }

  /**
   * The directory `name` and every missing parent, each made inside the one before; something other
   * than a directory on the way is refused as a parent is.
   */
  mkdirAll(name: string): void {
    if (name !== '') this.#parentSync(name, true, true).close();
  }

  mkdir(name: string): Promise<void> {
    return this.#in(name, (at) => mkdir(at), { write: true }).then(() => undefined);
  }

  rmdir(name: string): Promise<void> {
    return this.#in(name, (at) => rmdir(at), { write: true });
  }

  unlink(name: string): Promise<void> {
    return this.#in(name, (at) => unlink(at), { write: true });
  }

  symlink(target: string, name: string): Promise<void> {
    return this.#in(name, (at) => symlink(target, at), { write: true });
  }

  /** Sets the times of `name` itself, a symlink's own included. */
  lutimes(name: string, atime: number, mtime: number): Promise<void> {
    return this.#in(name, (at) => lutimes(at, atime, mtime), { write: true });
  }

  /** Sets the permissions of the file or directory `name`, never of what a symlink there points to. */
  async chmod(name: string, mode: number): Promise<void> {
    // Opened for its path alone (O_PATH): no permission to read it is needed.
    const fd = await this.#in(name, (at) => openFd(at, O_PATH | O_NOFOLLOW), { write: true });
    try {
      await chmod(FolderFs.pathOf(fd, join(this.root, name)), mode);
    } finally {
      await closeFd(fd);
    }
  }

  async rename(from: string, to: string): Promise<void> {
    this.#refuseInternal(to);
    this.#refuseInternal(from);
    const source = this.#parentSync(from, false);
    try {
      // Within one directory (a pulled file's temporary), it is opened once.
      if (parentOf(from) === parentOf(to)) {
        await rename(source.at, sibling(source.at, to));
        return;
      }
      const target = this.#parentSync(to, false);
      try {
        await rename(source.at, target.at);
      } finally {
        target.close();
      }
    } finally {
      source.close();
    }
  }

  /** The names in directory `name` ('' for the root). */
  async readdir(name: string): Promise<string[]> {
    const directory = this.#parentSync(name, false, true);
    try {
      return await readdir(directory.at);
    } finally {
      directory.close();
    }
  }

  readdirSync(name: string): string[] {
    const directory = this.#parentSync(name, false, true);
    try {
      return readdirSync(directory.at);
    } finally {
      directory.close();
    }
  }

  /** The names in directory `name` as the bytes they are on disk. */
  readdirBytesSync(name: string): Buffer[] {
    const directory = this.#parentSync(name, false, true);
    try {
      return readdirSync(directory.at, { encoding: 'buffer' });
    } finally {
      directory.close();
    }
  }

  readlinkSync(name: string): string {
    const parent = this.#parentSync(name, false);
    try {
      return readlinkSync(parent.at);
    } finally {
      parent.close();
    }
  }

  /** Renames inside one directory (the scan's renames to Unicode NFC). */
  renameSync(from: string, to: string): void {
    this.#refuseInternal(to);
    const parent = this.#parentSync(from, false);
    try {
      renameSync(parent.at, sibling(parent.at, to));
    } finally {
      parent.close();
    }
  }

  /** Whether `name` is internal to this folder (see isInternal). */
  isInternal(name: string): boolean {
    return isInternal(name, this.#markerName);
  }

  #refuseInternal(name: string): void {
    const top = name.split('/', 1)[0] as string;
    if (INTERNAL_NAMES.includes(top) || top === this.#markerName) throw new InternalNameError(name);
  }

  // Runs `operation` on `name` inside its parent, held open for it; a parent that is missing throws
  // ENOENT unless `missingParent` says what that means.
  async #in<T>(
    name: string,
    operation: (at: string) => Promise<T>,
    options: { write?: boolean; missingParent?: () => T } = {},
  ): Promise<T> {
    if (options.write) this.#refuseInternal(name);
    let parent: Parent;
    if (options.missingParent) {
      const found = this.#parentOrNone(name);
      if (!found) return options.missingParent();
      parent = found;
    } else parent = this.#parentSync(name, false);
    try {
      return await operation(parent.at);
    } finally {
      parent.close();
    }
  }

  #parentOrNone(name: string): Parent | undefined {
    try {
      return this.#parentSync(name, false);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /**
   * The parent directory of `name`, opened one part at a time, each inside the one before and never
   * through a symlink; with `create`, missing parts are made on the way. With `whole`, `name` itself
   * counts as a parent (a directory to make, or list).
   */
  #parentSync(name: string, create: boolean, whole = false): Parent {
    const parts = whole && name === '' ? [] : name.split('/');
    if (parts.some((part) => part === '' || part === '.' || part === '..')) {
      throw Object.assign(new Error(`${JSON.stringify(name)} is not a name inside the folder`), {
        code: 'EINVAL',
      });
    }
    const base = whole ? '.' : (parts.pop() as string);
    if (!PROC_FD) return this.#checkedParent(parts, base, create);
    // The root is opened for each operation: a descriptor kept would outlive a root removed and made
    // again, and what is done in it would be lost with it.
    let fd = openSync(this.root, O_RDONLY | O_DIRECTORY);
    let walked = '';
    try {
      for (const part of parts) {
        walked = walked === '' ? part : `${walked}/${part}`;
        const next = this.#openDirectory(fd, part, walked, create);
        closeSync(fd);
        fd = next;
      }
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    const held = fd;
    return { at: `${PROC_FD}/${held}/${base}`, close: () => closeSync(held) };
  }

  #openDirectory(fd: number, part: string, walked: string, create: boolean): number {
    const at = `${PROC_FD}/${fd}/${part}`;
    try {
      return openSync(at, DIRECTORY);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && create) {
        try {
          mkdirSync(at);
        } catch (made) {
          if ((made as NodeJS.ErrnoException).code !== 'EEXIST') throw made;
        }
        return this.#openDirectory(fd, part, walked, false);
      }
      if (code === 'ELOOP') throw new TraversesSymlinkError(walked);
      if (code === 'ENOTDIR') {
        throw lstatSync(at, { throwIfNoEntry: false })?.isSymbolicLink()
          ? new TraversesSymlinkError(walked)
          : new NotADirectoryError(walked);
      }
      throw error;
    }
  }

  // Without /proc: each parent checked with lstat just before the operation (Syncthing's way).
  #checkedParent(parts: string[], base: string, create: boolean): Parent {
    let walked = '';
    for (const part of parts) {
      walked = walked === '' ? part : `${walked}/${part}`;
      const path = join(this.root, walked);
      let stats = lstatSync(path, { throwIfNoEntry: false });
      if (!stats && create) {
        mkdirSync(path, { recursive: false });
        stats = lstatSync(path);
      }
      if (!stats) throw Object.assign(new Error(`no such directory: ${walked}`), { code: 'ENOENT' });
      if (stats.isSymbolicLink()) throw new TraversesSymlinkError(walked);
      if (!stats.isDirectory()) throw new NotADirectoryError(walked);
    }
    return { at: join(this.root, walked, base), close: () => {} };
  }
}
