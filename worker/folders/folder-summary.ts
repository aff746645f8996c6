import type { IndexDb } from '../index-db/index-db.ts';
import { countedBytes, folderNeed } from '../index-db/global.ts';

/** What a folder's status reads of its runner besides the index. */
export interface SummarizedFolder {
  readonly id: string;
  readonly state: string;
  readonly stateChanged: Date;
  readonly error: string | undefined;
  readonly ignores: { readonly empty: boolean };
  readonly problems: { readonly length: number };
  readonly pullProblems: number;
}

/** A folder's status in the shape of Syncthing's GET /rest/db/status. */
export function folderSummary(folder: SummarizedFolder, db: IndexDb) {
  const counts = db.counts(folder.id);
  const { sequence } = db.folder(folder.id);
  const bytes = countedBytes(counts);
  const items = counts.files + counts.directories + counts.symlinks;
  // Until other devices share the folder, the global state is the local one and nothing is needed.
  const shared = db.hasRemote(folder.id) ? folderNeed(db, folder.id) : undefined;
  const global = shared?.global ?? { ...counts, bytes };
  const need = shared?.need ?? { files: 0, directories: 0, symlinks: 0, deleted: 0, bytes: 0 };
  // Changes kept on a receive-only folder (what a revert would give up), counted apart.
  const kept = db.counts(folder.id, undefined, true);
  return {
    errors: folder.problems.length,
    globalBytes: global.bytes,
    globalDeleted: global.deleted,
    globalDirectories: global.directories,
    globalFiles: global.files,
    globalSymlinks: global.symlinks,
    globalTotalItems: global.files + global.directories + global.symlinks + global.deleted,
    ignorePatterns: !folder.ignores.empty,
    inSyncBytes: global.bytes - need.bytes,
    inSyncFiles: global.files - need.files,
    invalid: '',
    localBytes: bytes,
    localDeleted: counts.deleted,
    localDirectories: counts.directories,
    localFiles: counts.files,
    localSymlinks: counts.symlinks,
    localTotalItems: items + counts.deleted,
    needBytes: need.bytes,
    needDeletes: need.deleted,
    needDirectories: need.directories,
    needFiles: need.files,
    needSymlinks: need.symlinks,
    needTotalItems: need.files + need.directories + need.symlinks + need.deleted,
    pullErrors: folder.pullProblems,
    receiveOnlyChangedBytes: countedBytes(kept),
    receiveOnlyChangedDeletes: kept.deleted,
    receiveOnlyChangedDirectories: kept.directories,
    receiveOnlyChangedFiles: kept.files,
    receiveOnlyChangedSymlinks: kept.symlinks,
    receiveOnlyTotalItems: kept.files + kept.directories + kept.symlinks + kept.deleted,
    sequence,
    state: folder.state,
    stateChanged: folder.stateChanged.toISOString(),
    version: sequence,
    ...(folder.error ? { error: folder.error } : {}),
  };
}
