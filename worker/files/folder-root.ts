import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { makeDirectories } from '../../shared/make-directories.ts';

// Syncthing's words for a folder whose disk is not there (lib/config/folderconfiguration.go).
export const PATH_MISSING = 'folder path missing';
export const MARKER_MISSING =
  'folder marker missing (this indicates potential data loss, search docs/forum to get information about how to proceed)';

/**
 * Syncthing's CheckPath: why the folder at `path` cannot be scanned (its root missing or not a
 * directory, its marker missing), or undefined when it can. With `create` (a folder never indexed),
 * a missing root and marker are made first, as Syncthing's CreateRoot and CreateMarker make them; a
 * root that cannot be made is missing, with the reason.
 */
export async function checkFolderRoot(
  path: string,
  markerName: string,
  create: boolean,
): Promise<string | undefined> {
  try {
    const root = await kindOf(path);
    if (root === 'other') return `folder path ${path} is not a directory`;
    if (root === undefined && !create) return PATH_MISSING;
    if (root === undefined) {
      const failed = await makeDirectories(path).then(
        () => undefined,
        (error: Error) => error,
      );
      if (failed) return `${PATH_MISSING} (failed to create folder root directory: ${failed.message})`;
    }
    const marker = join(path, markerName);
    if ((await kindOf(marker)) !== undefined) return undefined;
    if (!create) return MARKER_MISSING;
    await mkdir(marker, { mode: 0o777 });
    return undefined;
  } catch (error) {
    return `folder path ${path} cannot be used: ${(error as Error).message}`;
  }
}

async function kindOf(at: string): Promise<'dir' | 'other' | undefined> {
  return stat(at).then(
    (s) => (s.isDirectory() ? 'dir' : 'other'),
    (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? undefined : Promise.reject(error)),
  );
}
