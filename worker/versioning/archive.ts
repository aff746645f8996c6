import type { Stats } from 'node:fs';
import { baseOf, parentOf } from '../files/folder-fs.ts';
import type { VersionerContext } from './context.ts';
import { failed, type VersioningOp } from './errors.ts';
import { moveFile } from './move.ts';
import { formatTag } from './tags.ts';

/** The name a file of base name `base` is archived under, given the archive moment's tag. */
export type Tagger = (base: string, tag: string) => string;

/**
 * Moves the regular file `name` of the folder into the versions, at its directory there, under
 * `tagger(base, now)`: lib/versioner/util.go archiveFile. A missing file is nothing to do (undefined);
 * a symlink, a directory or a special file is refused, never archived (Syncthing panics on a symlink,
 * and its callers never hand it one). A version keeps the file's mtime, except an untagged one (the
 * trashcan's) whose mtime becomes the archive moment, which its cleanout and its listed version time
 * are read from (moveFile keeps the mtime otherwise). Says the version's name in the versions.
 */
export async function archiveFile(
  context: VersionerContext,
  name: string,
  tagger: Tagger,
  op: VersioningOp = 'archive',
): Promise<string | undefined> {
  const source = context.folderFs.directoryOrNone(parentOf(name));
  if (!source) return undefined;
  try {
    const base = baseOf(name);
    const stats = await source.lstat(base);
    if (!stats) return undefined;
    if (!stats.isFile()) throw new Error(`${name} is ${kindOf(stats)}, not a regular file: not archived`);
    const target = context.versions.made().directory(parentOf(name), true);
    try {
      const now = context.now();
      const archived = tagger(base, formatTag(now));
      const version = inDirectoryOf(name, archived);
      try {
        await moveFile(source, base, target, archived);
      } catch (error) {
        throw failed(`moving ${name} to the versions as ${version}`, error);
      }
      if (archived === base) {
        const deleted = now.getTime() / 1000;
        await target.lutimes(archived, deleted, deleted).catch((error: unknown) => {
          context.warn(op, failed(`setting the deletion time of the trash copy ${version}`, error));
        });
      }
      return version;
    } finally {
      target.close();
    }
  } finally {
    source.close();
  }
}

export function kindOf(stats: Stats): string {
  if (stats.isSymbolicLink()) return 'a symlink';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFile()) return 'a regular file';
  return 'a special file';
}

/** The name of `base` in the directory `name` is in. */
export function inDirectoryOf(name: string, base: string): string {
  const parent = parentOf(name);
  return parent === '' ? base : `${parent}/${base}`;
}
