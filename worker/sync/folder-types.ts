import { FolderFs } from '../files/folder-fs.ts';
import {
  bumpVersion,
  type Counter,
  type FileRecord,
  isInvalid,
  withoutSequence,
} from '../records/file-record.ts';
import type { IndexDb } from '../index-db/index-db.ts';
import { equivalent, equivalentAt } from '../records/versions.ts';
import type { WalkProblem } from '../scanner/walk.ts';
import { folderNeed, fullRecords, globalOfOthers } from '../index-db/global.ts';

type Unsequenced = Omit<FileRecord, 'sequence'>;

export interface FolderChange {
  /** Records to write as this device's new versions. */
  records: Unsequenced[];
  /** What could not be done, by name; the rest was. */
  problems: WalkProblem[];
}

/**
 * Syncthing's override of a send-only folder (POST /rest/db/override): what other devices changed is
 * overruled by this device's versions. Each name this device needs gets a version newer than every
 * device's (the two vectors merged, then this device's counter bumped): its own file as it is, or a
 * deletion where it has none. Ignored names are left alone.
 */
export function overrideRemoteChanges(db: IndexDb, folder: string, shortId: bigint): FolderChange {
  const records: Unsequenced[] = [];
  for (const { name, global } of folderNeed(db, folder).needed) {
    // This device's record as it is, blocks and all: it is what gets the new version.
    const own = db.file(folder, name);
    if (own && isInvalid(own)) continue;
    const version = bumpVersion(mergeVersions(own?.version ?? [], global.version), shortId);
    const overruling = own ? { ...withoutSequence(own), modifiedBy: shortId } : deletion(global, shortId);
    records.push({ ...overruling, version });
  }
  return { records, problems: [] };
}

/**
 * What a send-only folder takes of the others' changes (Syncthing's sendOnlyFolder.pull): only the
 * versions of files it has the same already (same content, permissions unless ignored, and time), so
 * that they are no longer counted as needed. Nothing on disk changes.
 */
export function adoptEqualVersions(
  db: IndexDb,
  folder: { id: string; ignorePerms: boolean; modTimeWindowS: number },
): FolderChange {
  const records: Unsequenced[] = [];
  for (const item of folderNeed(db, folder.id).needed) {
    if (!item.own || isInvalid(item.own)) continue;
    const full = fullRecords(db, folder.id, item);
    if (full?.own && equivalentAt(full.own, full.global, folder)) records.push(withoutSequence(full.global));
  }
  return { records, problems: [] };
}

/**
 * Syncthing's revert of a receive-only folder (POST /rest/db/revert): the changes kept here are given
 * up for what the other devices have. A change to something others have loses its version, so that
 * the next pull brings theirs back (without a conflict copy: an empty version is older than any);
 * something only this device has (a local addition) is deleted from disk, if it is still as scanned.
 */
export async function revertLocalChanges(
  db: IndexDb,
  folder: { id: string; path: string; ignorePerms: boolean },
  shortId: bigint,
): Promise<FolderChange> {
  const records: Unsequenced[] = [];
  const problems: WalkProblem[] = [];
  const directories: FileRecord[] = [];
  const fs = new FolderFs(folder.path);
  const kept = [...db.iterate(folder.id)].filter((record) => record.receiveOnlyChanged);
  for (const record of kept) {
    const global = globalOfOthers(db, folder.id, record.name);
    if (global && equivalent(record, global, folder.ignorePerms)) {
      records.push({ ...withoutSequence(global), receiveOnlyChanged: false });
    } else if (global || record.deleted) {
      records.push({ ...withoutSequence(record), receiveOnlyChanged: false, version: [] });
    } else if (record.type === 'directory') {
      directories.push(record);
    } else {
      const problem = await removeAsScanned(fs, record).catch(
        (error: Error) => `not removed: ${error.message}`,
      );
      if (problem) problems.push({ name: record.name, error: problem });
      else records.push(deletion(record, shortId));
    }
  }
  // Directories last, the deepest first: each only if nothing is left in it.
  directories.sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
  for (const directory of directories) {
    const error = await fs.rmdir(directory.name).then(
      () => undefined,
      (caught: NodeJS.ErrnoException) => (caught.code === 'ENOENT' ? undefined : caught),
    );
    if (error) problems.push({ name: directory.name, error: `not removed: ${error.message}` });
    else records.push(deletion(directory, shortId));
  }
  return { records, problems };
}

// A record made a deletion by this device; without a version (a revert's: it never wins over
// anyone's) unless one is given after.
function deletion(record: FileRecord, shortId: bigint): Unsequenced {
  return {
    ...withoutSequence(record),
    receiveOnlyChanged: false,
    deleted: true,
    size: 0,
    blocks: [],
    blockSize: 0,
    symlinkTarget: '',
    modifiedBy: shortId,
    version: [],
  };
}

// Deletes a file or symlink only while it is what the index says: a change since is never lost.
async function removeAsScanned(fs: FolderFs, record: FileRecord): Promise<string | undefined> {
  const stats = fs.lstatBigSync(record.name);
  if (!stats) return undefined;
  const same =
    record.type === 'symlink'
      ? stats.isSymbolicLink()
      : stats.isFile() &&
        Number(stats.size) === record.size &&
        stats.mtimeNs / 1000n ===
          (BigInt(record.modifiedS) * 1_000_000_000n + BigInt(record.modifiedNs)) / 1000n;
  if (!same) return 'changed on disk since it was last scanned; not removed (scan, then revert again)';
  await fs.unlink(record.name);
  return undefined;
}

/** Each device's highest counter of the two vectors, sorted by device. */
export function mergeVersions(a: readonly Counter[], b: readonly Counter[]): Counter[] {
  const merged = new Map<bigint, bigint>();
  for (const { id, value } of [...a, ...b]) {
    const known = merged.get(id);
    if (known === undefined || value > known) merged.set(id, value);
  }
  return [...merged]
    .map(([id, value]) => ({ id, value }))
    .sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
}
