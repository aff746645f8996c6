import { baseOf, type FolderFs, parentOf } from '../files/folder-fs.ts';
import { inDirectoryOf } from './archive.ts';
import type { VersionerContext } from './context.ts';
import { failed, type VersioningOp } from './errors.ts';
import { isVersionOf, sortLikeGo, untagFilename } from './tags.ts';
import { walkTree } from './walk.ts';

/*
 * The periodic cleanout of lib/versioner: by mtime for the trashcan (util.go cleanByDay, kept in
 * trashcan.go by v1.22), by version name for simple and staggered (v1.22 util.go clean; 1.19.2
 * staggered.go Clean), then the directories left empty (empty_dir_tracker.go). A failure does not stop
 * the pass (Syncthing stops at the first): the rest is still cleaned, then the failures are thrown.
 */

/** Which of one file's versions (names in the versions) to remove, at `now`. */
export type VersionsToRemove = (versions: string[], now: Date) => string[];

// What cannot be read is named among the errors, and keeps its directory.
function keptUnread(dirs: EmptyDirs, errors: Error[]) {
  return (name: string, error: unknown) => {
    errors.push(failed(`reading ${name}`, error));
    dirs.addFile(name);
  };
}

/** trashcan: every non-directory whose mtime is before now - cleanoutDays; nothing at all when <= 0. */
export async function cleanByDay(context: VersionerContext, cleanoutDays: number): Promise<void> {
  if (cleanoutDays <= 0) return;
  const fs = context.versions.existing();
  if (!fs) return;
  const cutoff = context.now().getTime() - cleanoutDays * 24 * 3600 * 1000;
  const dirs = new EmptyDirs();
  const errors: Error[] = [];
  await walkTree(fs, {
    directory: (name) => dirs.addDir(name),
    unreadable: keptUnread(dirs, errors),
    entry: async (name, stats) => {
      if (stats.mtimeMs >= cutoff) return dirs.addFile(name);
      await fs.unlink(name).catch((error: unknown) => {
        errors.push(failed(`removing ${name}`, error));
        dirs.addFile(name);
      });
    },
  });
  await dirs.removeEmpty(fs, errors);
  throwAll(errors);
}

/**
 * simple, staggered: the versions grouped by original name (UntagFilename; what has no tag is left
 * alone), `toRemove` of each group removed. As in Syncthing, every file seen keeps its directory, so a
 * directory this pass empties goes at the next.
 */
export async function cleanByName(context: VersionerContext, toRemove: VersionsToRemove): Promise<void> {
  const fs = context.versions.existing();
  if (!fs) return;
  const groups = new Map<string, string[]>();
  const dirs = new EmptyDirs();
  const errors: Error[] = [];
  await walkTree(fs, {
    directory: (name) => dirs.addDir(name),
    unreadable: keptUnread(dirs, errors),
    entry: (path) => {
      dirs.addFile(path);
      const [name] = untagFilename(path);
      if (name === '') return;
      const group = groups.get(name);
      if (group) group.push(path);
      else groups.set(name, [path]);
    },
  });
  for (const versions of groups.values()) {
    await removeVersions(context, fs, toRemove(versions, context.now()), 'clean', (error) =>
      errors.push(error),
    );
  }
  await dirs.removeEmpty(fs, errors);
  throwAll(errors);
}

/**
 * After an archive, the versions of `name` past what `toRemove` keeps are removed (simple.go,
 * staggered.go Archive): the archive succeeded, so a failure here is a warning, as Syncthing logs it.
 */
export async function pruneVersionsOf(
  context: VersionerContext,
  name: string,
  toRemove: VersionsToRemove,
): Promise<void> {
  const warn = (error: Error) => context.warn('archive', error);
  try {
    const fs = context.versions.existing();
    if (!fs) return;
    const versions = await findVersionsOf(fs, name);
    await removeVersions(context, fs, toRemove(versions, context.now()), 'archive', warn);
  } catch (error) {
    warn(failed(`listing the versions of ${name}`, error));
  }
}

/** util.go findAllVersions: the versions of `name` beside where it is archived, oldest first. */
export async function findVersionsOf(fs: FolderFs, name: string): Promise<string[]> {
  const dir = fs.directoryOrNone(parentOf(name));
  if (!dir) return [];
  try {
    const base = baseOf(name);
    const found = (await dir.readdir()).filter((entry) => isVersionOf(base, entry));
    return sortLikeGo(found.map((entry) => inDirectoryOf(name, entry)));
  } finally {
    dir.close();
  }
}

// staggered.go expire: a directory named like a version is left alone (and said), the rest removed.
async function removeVersions(
  context: VersionerContext,
  fs: FolderFs,
  names: string[],
  op: VersioningOp,
  report: (error: Error) => void,
): Promise<void> {
  for (const name of names) {
    try {
      const stats = await fs.lstat(name);
      if (!stats) continue;
      if (stats.isDirectory()) {
        context.warn(op, new Error(`non-file ${JSON.stringify(name)} is named like a file version`));
        continue;
      }
      await fs.unlink(name);
    } catch (error) {
      report(failed(`removing the old version ${name}`, error));
    }
  }
}

/** empty_dir_tracker.go: the directories no kept file lies under, removed deepest first. */
class EmptyDirs {
  readonly #dirs = new Set<string>();

  addDir(name: string): void {
    this.#dirs.add(name);
  }

  addFile(name: string): void {
    for (let dir = parentOf(name); dir !== ''; dir = parentOf(dir)) this.#dirs.delete(dir);
  }

  async removeEmpty(fs: FolderFs, errors: Error[]): Promise<void> {
    for (const dir of sortLikeGo([...this.#dirs]).reverse()) {
      await fs
        .rmdir(dir)
        .catch((error: unknown) => errors.push(failed(`removing the directory ${dir}`, error)));
    }
  }
}

function throwAll(errors: Error[]): void {
  if (errors.length === 0) return;
  const [first] = errors as [Error];
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  throw new Error(`${first.message}${more}`, {
    cause: errors.length > 1 ? new AggregateError(errors) : first,
  });
}
