import { baseOf, parentOf, temporaryName } from '../files/folder-fs.ts';
import { archiveFile, inDirectoryOf, kindOf, type Tagger } from './archive.ts';
import type { VersionerContext } from './context.ts';
import { failed } from './errors.ts';
import { moveFile } from './move.ts';
import { formatTag } from './tags.ts';

/*
 * lib/versioner/util.go restoreFile: the current file archived (tagged now), then the version moved
 * back out of the versions. The current file is first set aside in the versions under its temporary
 * name, and given its archive name once the version is out, as trashcan.go Restore does for the
 * trashcan: its archive name may be the very name of the version restored, which would be overwritten
 * (the trash copy always; a tagged version restored within the second it was archived in, as a user
 * restores what a pull just replaced). util.go archives first, and so loses the version then: the
 * restore answers no failure, the current file is back in place, and no version is left.
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
  const now = context.now();
  await restoreVersion(context, name, versionTime, version, (base) => tagger(base, formatTag(now)));
}

/**
 * Restores `name` to `version` (see moveVersionBack). What is in the way is cleared first (see
 * clearForRestore): a regular file is set aside, and once the version is back it is kept in the
 * versions under `archivedAs(base)`, or put back if the version could not be.
 */
export async function restoreVersion(
  context: VersionerContext,
  name: string,
  versionTime: Date,
  version: string,
  archivedAs: (base: string) => string,
): Promise<void> {
  // Looked for before the current file is moved away: a time that names no version leaves it in place
  // (Syncthing archived it first, and a mistyped time lost the file from the folder).
  if ((await context.folderFs.lstat(name))?.isDirectory())
    throw new Error('cannot restore on top of a directory');
  await sourceOf(context, name, versionTime, version);
  const aside = await clearForRestore(context, name);
  try {
    await moveVersionBack(context, name, versionTime, version);
  } catch (error) {
    if (aside) await putBack(context, aside, name, error);
    throw error;
  }
  if (!aside) return;
  const archived = inDirectoryOf(name, archivedAs(baseOf(name)));
  await context.versions
    .made()
    .rename(aside, archived)
    .catch((error: unknown) => {
      throw failed(`restored; keeping the replaced file ${aside} as the version ${archived}`, error);
    });
}

/**
 * Clears `name` in the folder for a restore: a directory there refuses it, a symlink is removed (never
 * archived), a regular file is set aside in the versions under its temporary name, which is said.
 */
async function clearForRestore(context: VersionerContext, name: string): Promise<string | undefined> {
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
    return await archiveFile(context, name, (base) => baseOf(temporaryName(base)), 'restore');
  } catch (error) {
    throw failed('archiving existing file', error);
  }
}

/**
 * Moves the version back to `name`: the regular file `version` of the versions, or else an untagged
 * `name` there whose mtime, to the second, is `versionTime` (a trashcan copy). It leaves the versions;
 * it keeps its mtime.
 */
async function moveVersionBack(
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

// The file set aside for a restore that failed goes back where it was; if it cannot, the restore's
// error says where it is.
async function putBack(
  context: VersionerContext,
  aside: string,
  name: string,
  cause: unknown,
): Promise<void> {
  try {
    if (await context.folderFs.lstat(name)) throw new Error(`${name} exists`);
    const from = context.versions.made().directory(parentOf(aside));
    try {
      const to = context.folderFs.directory(parentOf(name));
      try {
        await moveFile(from, baseOf(aside), to, baseOf(name));
      } finally {
        to.close();
      }
    } finally {
      from.close();
    }
  } catch (error) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw failed(
      `${reason}; the current file, set aside as ${aside} in the versions, was not put back`,
      error,
    );
  }
}
