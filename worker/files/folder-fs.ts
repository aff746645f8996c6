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
  unlinkSync,
} from 'node:fs';
import { chmod, lutimes, mkdir, readdir, rename, rmdir, symlink, unlink } from 'node:fs/promises';
import { createHash } from 'node:crypto';
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
/** The folder's ignore patterns (Syncthing's .stignore). */
export const IGNORE_FILE = '.stignore';
const INTERNAL_NAMES = ['.stfolder', IGNORE_FILE, '.stversions'];

/** A folder's configured path as a directory: `~` is the home directory (Syncthing's ExpandTilde). */
export function folderRoot(path: string): string {
  return path === '~' ? homedir() : path.startsWith('~/') ? join(homedir(), path.slice(2)) : path;
}

/**
 * Syncthing's temporary name for a file being pulled (lib/fs/tempname.go), where a resumed pull reads:
 * `.syncthing.NAME.tmp` beside it, NAME replaced by its SHA-256 when longer than 145 bytes, so that
 * the temporary name of a long name stays within the file system's limit.
 */
export function temporaryName(name: string): string {
  const slash = name.lastIndexOf('/');
  const base = name.slice(slash + 1);
  const kept =
    Buffer.byteLength(base) > MAX_TEMPORARY_BASE ? createHash('sha256').update(base).digest('hex') : base;
  return `${name.slice(0, slash + 1)}.syncthing.${kept}.tmp`;
}
const MAX_TEMPORARY_BASE = 160 - '.syncthing.'.length - '.tmp'.length;

/** The directory a name is in, '' for the folder's root. */
export function parentOf(name: string): string {
  return name.slice(0, Math.max(0, name.lastIndexOf('/')));
}

/** A name's last part, its name in its directory. */
export function baseOf(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}

/** Whether a base name is one of Syncthing's temporary names (lib/fs/tempname.go IsTemporary). */
export function isTemporary(name: string): boolean {
  const base = baseOf(name);
  return base.startsWith('.syncthing.') || base.startsWith('~syncthing~');
}

/**
 * Whether a name is the folder's own (its marker, `.stfolder`, `.stignore`, `.stversions`, or below
 * them) or a temporary file, or lies below one: never taken from another device, never written or
 * deleted on its word (stricter than Syncthing, whose IsTemporary looks at the last part only).
 */
export function isInternal(name: string, markerName = '.stfolder'): boolean {
  const parts = name.split('/');
  const top = parts[0] as string;
  return INTERNAL_NAMES.includes(top) || top === markerName || parts.some(isTemporary);
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

/**
 * A directory of a folder, held open: the entries in it are named by their base names, and reached
 * without their parents being looked up again, so that the operations on one file (a pull's checks,
 * its temporary file, the rename into place) all happen in the directory that was checked.
 */
export class FolderDirectory {
  /** The directory's name in the folder, '' for the root. */
  readonly name: string;
  // /proc/self/fd/N of the directory held open, or (without /proc) its path.
  readonly #path: string;
  readonly #fd: number | undefined;
  readonly #refuse: (name: string) => void;

  constructor(name: string, path: string, fd: number | undefined, refuse: (name: string) => void) {
    this.name = name;
    this.#path = path;
    this.#fd = fd;
    this.#refuse = refuse;
  }

  /** What is at `base`, not following a symlink there; undefined when nothing is. */
  lstat(base: string): Promise<Stats | undefined> {
    return lstatOrNone(this.#at(base));
  }

  lstatSync(base: string): Stats | undefined {
    return lstatSync(this.#at(base), { throwIfNoEntry: false });
  }

  lstatBigSync(base: string): BigIntStats | undefined {
    return lstatSync(this.#at(base), { bigint: true, throwIfNoEntry: false });
  }

  /** Opens a file (never a symlink: O_NOFOLLOW); the descriptor is the caller's to close. */
  open(base: string, flags: OpenFlags, mode = 0o666): Promise<number> {
    if (flags !== 'r') this.#refuse(this.#name(base));
    return openFd(this.#at(base), FLAGS[flags] | O_NOFOLLOW, mode);
  }

  openSync(base: string, flags: OpenFlags): number {
    if (flags !== 'r') this.#refuse(this.#name(base));
    return openSync(this.#at(base), FLAGS[flags] | O_NOFOLLOW);
  }

  async mkdir(base: string): Promise<void> {
    await mkdir(this.#written(base));
  }

  rmdir(base: string): Promise<void> {
    return rmdir(this.#written(base));
  }

  unlink(base: string): Promise<void> {
    return unlink(this.#written(base));
  }

  unlinkSync(base: string): void {
    unlinkSync(this.#written(base));
  }

  symlink(target: string, base: string): Promise<void> {
    return symlink(target, this.#written(base));
  }

  /** Sets the times of `base` itself, a symlink's own included. */
  lutimes(base: string, atime: number, mtime: number): Promise<void> {
    return lutimes(this.#written(base), atime, mtime);
  }

  /** Sets the permissions of the file or directory `base`, never of what a symlink there points to. */
  async chmod(base: string, mode: number): Promise<void> {
    // Opened for its path alone (O_PATH): no permission to read it is needed.
    const fd = await openFd(this.#written(base), O_PATH | O_NOFOLLOW);
    try {
      await chmod(PROC_FD ? `${PROC_FD}/${fd}` : this.#at(base), mode);
    } finally {
      await closeFd(fd);
    }
  }

  rename(from: string, to: string): Promise<void> {
    return rename(this.#written(from), this.#written(to));
  }

  renameSync(from: string, to: string): void {
    renameSync(this.#written(from), this.#written(to));
  }

  /** Moves `from`, in this directory, to `to` in `target`, another directory of the folder. */
  renameInto(from: string, target: FolderDirectory, to: string): Promise<void> {
    return rename(this.#written(from), target.#written(to));
  }

  readlinkSync(base: string): string {
    return readlinkSync(this.#at(base));
  }

  /** A symlink's target as the bytes it is on disk. */
  readlinkBytesSync(base: string): Buffer {
    return readlinkSync(this.#at(base), { encoding: 'buffer' });
  }

  readdir(): Promise<string[]> {
    return readdir(this.#at('.'));
  }

  readdirSync(): string[] {
    return readdirSync(this.#at('.'));
  }

  /** The names in it as the bytes they are on disk. */
  readdirBytesSync(): Buffer[] {
    return readdirSync(this.#at('.'), { encoding: 'buffer' });
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
  }

  #name(base: string): string {
    return this.name === '' ? base : `${this.name}/${base}`;
  }

  #written(base: string): string {
    this.#refuse(this.#name(base));
    return this.#at(base);
  }

  #at(base: string): string {
    if (base === '' || base === '..' || base.includes('/')) {
      throw Object.assign(new Error(`${JSON.stringify(base)} is not a name in a directory`), {
        code: 'EINVAL',
      });
    }
    return `${this.#path}/${base}`;
  }
}

/** The files of one folder, by their names relative to it. */
export class FolderFs {
  readonly root: string;
  readonly #markerName: string;

  constructor(path: string, markerName = '.stfolder') {
    this.root = folderRoot(path);
    this.#markerName = markerName;
  }

  /**
   * The directory `name` ('' for the root), opened one part at a time, each inside the one before
   * and never through a symlink; with `create`, missing parts are made on the way. The caller closes
   * it.
   */
  directory(name: string, create = false): FolderDirectory {
    const refuse = (entry: string) => this.#refuseInternal(entry);
    const parts = name === '' ? [] : name.split('/');
    if (parts.some((part) => part === '' || part === '.' || part === '..')) {
      throw Object.assign(new Error(`${JSON.stringify(name)} is not a name inside the folder`), {
        code: 'EINVAL',
      });
    }
    if (!PROC_FD) {
      this.#checkParents(parts, create);
      return new FolderDirectory(name, join(this.root, name), undefined, refuse);
    }
    // The root is opened for each operation: a descriptor kept would outlive a root removed and made
    // again, and what is done in it would be lost with it.
    let fd = openSync(this.root, O_RDONLY | O_DIRECTORY);
    let walked = '';
    try {
      for (const part of parts) {
        walked = walked === '' ? part : `${walked}/${part}`;
        const next = openDirectory(fd, part, walked, create);
        closeSync(fd);
        fd = next;
      }
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    return new FolderDirectory(name, `${PROC_FD}/${fd}`, fd, refuse);
  }

  /** The directory `name`, or undefined when it (or a parent) is missing. */
  directoryOrNone(name: string): FolderDirectory | undefined {
    try {
      return this.directory(name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /** What is at `name`, not following a symlink there; undefined when nothing is. */
  lstat(name: string): Promise<Stats | undefined> {
    return this.#in(
      name,
      (dir, base) => dir.lstat(base),
      () => undefined,
    );
  }

  lstatSync(name: string): Stats | undefined {
    return this.#inSync(
      name,
      (dir, base) => dir.lstatSync(base),
      () => undefined,
    );
  }

  /** lstatSync with times in nanoseconds, as the scan reads them. */
  lstatBigSync(name: string): BigIntStats | undefined {
    return this.#inSync(
      name,
      (dir, base) => dir.lstatBigSync(base),
      () => undefined,
    );
  }

  /** Opens a file (never a symlink: O_NOFOLLOW); the descriptor is the caller's to close. */
  async open(name: string, flags: OpenFlags, mode = 0o666): Promise<number> {
    if (flags !== 'r') this.#refuseInternal(name);
    return this.#in(name, (dir, base) => dir.open(base, flags, mode));
  }

  openSync(name: string, flags: OpenFlags): number {
    return this.#inSync(name, (dir, base) => dir.openSync(base, flags));
  }

  async mkdir(name: string): Promise<void> {
    this.#refuseInternal(name);
    return this.#in(name, (dir, base) => dir.mkdir(base));
  }

  async rmdir(name: string): Promise<void> {
    this.#refuseInternal(name);
    return this.#in(name, (dir, base) => dir.rmdir(base));
  }

  async unlink(name: string): Promise<void> {
    this.#refuseInternal(name);
    return this.#in(name, (dir, base) => dir.unlink(base));
  }

  async symlink(target: string, name: string): Promise<void> {
    this.#refuseInternal(name);
    return this.#in(name, (dir, base) => dir.symlink(target, base));
  }

  /** Sets the times of `name` itself, a symlink's own included. */
  async lutimes(name: string, atime: number, mtime: number): Promise<void> {
    this.#refuseInternal(name);
    return this.#in(name, (dir, base) => dir.lutimes(base, atime, mtime));
  }

  /** Sets the permissions of the file or directory `name`, never of what a symlink there points to. */
  async chmod(name: string, mode: number): Promise<void> {
    this.#refuseInternal(name);
    return this.#in(name, (dir, base) => dir.chmod(base, mode));
  }

  async rename(from: string, to: string): Promise<void> {
    this.#refuseInternal(to);
    this.#refuseInternal(from);
    // Within one directory (a conflict copy), it is opened once.
    if (parentOf(from) === parentOf(to)) {
      return this.#in(from, (dir, base) => dir.rename(base, baseOf(to)));
    }
    const source = this.directory(parentOf(from));
    try {
      const target = this.directory(parentOf(to));
      try {
        await source.renameInto(baseOf(from), target, baseOf(to));
      } finally {
        target.close();
      }
    } finally {
      source.close();
    }
  }

  /** The names in directory `name` ('' for the root). */
  async readdir(name: string): Promise<string[]> {
    const dir = this.directory(name);
    try {
      return await dir.readdir();
    } finally {
      dir.close();
    }
  }

  readdirSync(name: string): string[] {
    return this.#inDirectorySync(name, (dir) => dir.readdirSync());
  }

  /** The names in directory `name` as the bytes they are on disk. */
  readdirBytesSync(name: string): Buffer[] {
    return this.#inDirectorySync(name, (dir) => dir.readdirBytesSync());
  }

  readlinkSync(name: string): string {
    return this.#inSync(name, (dir, base) => dir.readlinkSync(base));
  }

  /** Renames inside one directory (the scan's renames to Unicode NFC). */
  renameSync(from: string, to: string): void {
    this.#inSync(from, (dir, base) => dir.renameSync(base, baseOf(to)));
  }

  /** Whether `name` is internal to this folder (see isInternal). */
  isInternal(name: string): boolean {
    return isInternal(name, this.#markerName);
  }

  #refuseInternal(name: string): void {
    const top = name.split('/', 1)[0] as string;
    if (INTERNAL_NAMES.includes(top) || top === this.#markerName) throw new InternalNameError(name);
  }

  // Runs `operation` on `name` in its directory, held open for it; a directory that is missing
  // throws ENOENT unless `missing` says what that means.
  async #in<T>(
    name: string,
    operation: (dir: FolderDirectory, base: string) => Promise<T>,
    missing?: () => T,
  ): Promise<T> {
    const dir = missing ? this.directoryOrNone(parentOf(name)) : this.directory(parentOf(name));
    if (!dir) return (missing as () => T)();
    try {
      return await operation(dir, baseOf(name));
    } finally {
      dir.close();
    }
  }

  #inSync<T>(name: string, operation: (dir: FolderDirectory, base: string) => T, missing?: () => T): T {
    const dir = missing ? this.directoryOrNone(parentOf(name)) : this.directory(parentOf(name));
    if (!dir) return (missing as () => T)();
    try {
      return operation(dir, baseOf(name));
    } finally {
      dir.close();
    }
  }

  #inDirectorySync<T>(name: string, operation: (dir: FolderDirectory) => T): T {
    const dir = this.directory(name);
    try {
      return operation(dir);
    } finally {
      dir.close();
    }
  }

  // Without /proc: each parent checked with lstat just before the operation (Syncthing's way).
  #checkParents(parts: string[], create: boolean): void {
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
  }
}

// Opens the directory `part` inside the directory `fd`, never through a symlink.
function openDirectory(fd: number, part: string, walked: string, create: boolean): number {
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
      return openDirectory(fd, part, walked, false);
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
