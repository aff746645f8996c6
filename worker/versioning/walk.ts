import type { Stats } from 'node:fs';
import type { FolderDirectory, FolderFs } from '../files/folder-fs.ts';

/**
 * Syncthing's Walk of the versions fs (lib/fs/walkfs.go, as util.go retrieveVersions, cleanByDay and
 * staggered.go Clean use it): every entry by its '/'-separated name under the root, in name order,
 * each directory opened inside the one before and never through a symlink (a symlink is an entry, not
 * a directory, and is not followed).
 */
export interface Visitor {
  /** A directory, before what is in it. */
  directory(name: string): void;
  /** Anything else: a file, a symlink (its own lstat), a special file. */
  entry(name: string, stats: Stats): void | Promise<void>;
  /** What could not be read (its lstat, or the listing of a directory below the root). */
  unreadable(name: string, error: unknown): void;
}

/** Walks the tree of `fs`; false when its root is missing. A root that cannot be listed throws. */
export async function walkTree(fs: FolderFs, visitor: Visitor): Promise<boolean> {
  const root = fs.directoryOrNone('');
  if (!root) return false;
  try {
    await walkIn(fs, root, await root.readdir(), visitor);
  } finally {
    root.close();
  }
  return true;
}

async function walkIn(fs: FolderFs, dir: FolderDirectory, names: string[], visitor: Visitor): Promise<void> {
  for (const base of names.sort()) {
    const name = dir.name === '' ? base : `${dir.name}/${base}`;
    let stats: Stats | undefined;
    try {
      stats = await dir.lstat(base);
    } catch (error) {
      visitor.unreadable(name, error);
      continue;
    }
    if (!stats) continue;
    if (!stats.isDirectory()) {
      await visitor.entry(name, stats);
      continue;
    }
    visitor.directory(name);
    let sub: FolderDirectory;
    let entries: string[];
    try {
      sub = fs.directory(name);
    } catch (error) {
      visitor.unreadable(name, error);
      continue;
    }
    try {
      try {
        entries = await sub.readdir();
      } catch (error) {
        visitor.unreadable(name, error);
        continue;
      }
      await walkIn(fs, sub, entries, visitor);
    } finally {
      sub.close();
    }
  }
}
