import type { FolderCounts, IndexDb } from '../index-db/index-db.ts';
import type { FolderRunner } from './folder-runner.ts';

/** Syncthing counts a directory or a symlink as this many bytes (protocol.SyntheticDirectorySize). */
export const SYNTHETIC_SIZE = 128;

/** A folder's bytes as Syncthing counts them: its files', and the synthetic size of the rest. */
export function countedBytes(counts: FolderCounts): number {
  return counts.bytes + SYNTHETIC_SIZE * (counts.directories + counts.symlinks);
}

/**
 * A folder's status in the shape of Syncthing's GET /rest/db/status. Until other devices share the
 * folder, the global state is the local one and nothing is needed.
 */
export function folderSummary(folder: FolderRunner, db: IndexDb) {
  const counts = db.counts(folder.id);
  const { sequence } = db.folder(folder.id);
  const bytes = countedBytes(counts);
  const items = counts.files + counts.directories + counts.symlinks;
  return {
    errors: folder.problems.length,
    globalBytes: bytes,
    globalDeleted: counts.deleted,
    globalDirectories: counts.directories,
    globalFiles: counts.files,
    globalSymlinks: counts.symlinks,
    globalTotalItems: items + counts.deleted,
    ignorePatterns: !folder.ignores.empty,
    inSyncBytes: bytes,
    inSyncFiles: counts.files,
    invalid: '',
    localBytes: bytes,
    localDeleted: counts.deleted,
    localDirectories: counts.directories,
    localFiles: counts.files,
    localSymlinks: counts.symlinks,
    localTotalItems: items + counts.deleted,
    needBytes: 0,
    needDeletes: 0,
    needDirectories: 0,
    needFiles: 0,
    needSymlinks: 0,
    needTotalItems: 0,
    pullErrors: 0,
    sequence,
    state: folder.state,
    stateChanged: folder.stateChanged.toISOString(),
    version: sequence,
    ...(folder.error ? { error: folder.error } : {}),
  };
}
