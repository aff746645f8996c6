import { baseOf, parentOf } from '../files/folder-fs.ts';
import { archiveFile, inDirectoryOf, kindOf, type Tagger } from './archive.ts';
import type { VersionerContext } from './context.ts';
import { failed } from './errors.ts';
import { moveFile } from './move.ts';
import { formatTag } from './tags.ts';

/*
 * lib/versioner/util.go restoreFile, in its two halves so that the trashcan (trashcan.go) can do what
 * it must between them: the way is cleared (the current file archived first, tagged now), then the
 * version is moved back out of the versions.
 */

/** Restores `name` to the version of `versionTime`, found by `tagger` (simple, staggered). */
export async function restoreFile(
  context: VersionerContext,
  name: string,
  versionTime: Date,
  tagger: Tagger,
): Promise<void> {
  const tag = formatTag(new Date(Math.floor(versionTime.getTime() / 1000) * 1000));
  const version = inDirectoryOf(name, tagger(baseOf(name), tag));
  // Looked for before the current file is moved away: a time that names no version leaves it in place
  // (Syncthing archived it first, and a mistyped time lost the file from the folder).
  if ((await context.folderFs.lstat(name))?.isDirectory())
    throw new Error('cannot restore on top of a directory');
  await sourceOf(context, name, versionTime, version);
  await clearForRestore(context, name, tagger);
  await moveVersionBack(context, name, versionTime, version);
}

/**
 * Clears `name` in the folder for a restore: a directory there refuses it, a symlink is removed (never
 * archived), a regular file is archived with `tagger`. Says the name the file was archived as.
 */
export async function clearForRestore(
  context: VersionerContext,
  name: string,
  tagger: Tagger,
): Promise<string | undefined> {
  const current = await context.folderFs.lstat(name);
  if (!current) return undefined;
  if (current.isDirectory()) throw new Error('cannot restore on top of a directory');
  if (current.isSymbolicLink()) {
    try {
      await context.folderFs.unlink(name);
    } catch (error) {
      throw failed('removing existing symlink', error);
    }
    return undefined;
  }
  if (!current.isFile()) throw new Error(`cannot restore on top of ${kindOf(current)}`);
  try {
    return await archiveFile(context, name, tagger, 'restore');
  } catch (error) {
    throw failed('archiving existing file', error);
  }
}

/**
 * Moves the version back to `name`: the regular file `version` of the versions, or else an untagged
 * `name` there whose mtime, to the second, is `versionTime` (a trashcan copy). It leaves the versions;
 * it keeps its mtime.
 */
export async function moveVersionBack(
  context: VersionerContext,
  name: string,
  versionTime: Date,
  version: string,
): Promise<void> {
  const { versions, source } = await sourceOf(context, name, versionTime, version);
  if (await context.folderFs.lstat(name)) throw new Error('file already exists');
  const from = versions.directory(parentOf(source));
  try {
    const to = context.folderFs.directory(parentOf(name), true);
    try {
      await moveFile(from, baseOf(source), to, baseOf(name));
    } catch (error) {
      throw failed(`moving the version ${source} to ${name}`, error);
    } finally {
      to.close();
    }
  } finally {
    from.close();
  }
}

/**
 * The version to restore: the regular file `version` of the versions, or else an untagged `name`
 * there whose mtime, to the second, is `versionTime` (a trashcan copy); 'version not found' otherwise.
 */
async function sourceOf(context: VersionerContext, name: string, versionTime: Date, version: string) {
  const versions = context.versions.existing();
  if (versions) {
    const tagged = await versions.lstat(version);
    if (tagged?.isFile()) return { versions, source: version };
    const untagged = await versions.lstat(name);
    if (untagged?.isFile() && Math.floor(untagged.mtimeMs / 1000) * 1000 === versionTime.getTime()) {
      return { versions, source: name };
    }
  }
  throw new Error('version not found');
}
