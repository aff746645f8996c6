import { type FileRecord, isInvalid } from '../index-db/file-record.ts';
import { type IndexDb, LOCAL } from '../index-db/index-db.ts';
import { compareVersions, globalVersion } from '../index-db/versions.ts';
import { SYNTHETIC_SIZE } from '../folders/folder-summary.ts';

/** Counts of records, as Syncthing's status and completion count them. */
export interface Tally {
  files: number;
  directories: number;
  symlinks: number;
  deleted: number;
  /** Files' sizes, and the synthetic size of directories and symlinks. */
  bytes: number;
}

export interface FolderNeed {
  global: Tally;
  /** What `device` lacks of the global versions (deletions in `deleted`). */
  need: Tally;
  /** What `device` needs, by name: the global version, the device's own, and who has the global. */
  needed: NeededItem[];
}

/**
 * A name a device needs: the global version and the device's own, both without their blocks (see
 * `fullRecords` for them), and the devices that have the global version.
 */
export interface NeededItem {
  name: string;
  global: FileRecord;
  own: FileRecord | undefined;
  holders: string[];
}

const empty = (): Tally => ({ files: 0, directories: 0, symlinks: 0, deleted: 0, bytes: 0 });

function add(tally: Tally, record: FileRecord): void {
  if (record.deleted) tally.deleted += 1;
  else if (record.type === 'directory') {
    tally.directories += 1;
    tally.bytes += SYNTHETIC_SIZE;
  } else if (record.type === 'symlink') {
    tally.symlinks += 1;
    tally.bytes += SYNTHETIC_SIZE;
  } else {
    tally.files += 1;
    tally.bytes += record.size;
  }
}

/**
 * The folder's global state and what `device` (this one: LOCAL) needs of it: every name's global
 * version among the devices, and the names where the device has another version (or none, unless the
 * global version is a deletion).
 */
export function folderNeed(db: IndexDb, folder: string, device: string = LOCAL): FolderNeed {
  // Asked for by every status, completion and pull: computed again only once the index has changed.
  let known = cache.get(db);
  if (!known) cache.set(db, (known = new Map()));
  const key = `${folder}\0${device}`;
  const cached = known.get(key);
  if (cached && cached.generation === db.generation) return cached.need;
  const need = computeNeed(db, folder, device);
  known.set(key, { generation: db.generation, need });
  return need;
}

// The needs computed, by index and folder and device, with the index's generation they hold for. The
// answer is shared: callers do not change it.
const cache = new WeakMap<IndexDb, Map<string, { generation: number; need: FolderNeed }>>();

function computeNeed(db: IndexDb, folder: string, device: string): FolderNeed {
  const result: FolderNeed = { global: empty(), need: empty(), needed: [] };
  for (const { name, versions } of db.allVersions(folder, true)) {
    const found = globalVersion(versions);
    if (!found || isInvalid(found.global.record)) continue;
    const global = found.global.record;
    add(result.global, global);
    if (found.holders.includes(device)) continue;
    const own = versions.find((entry) => entry.device === device)?.record;
    if (global.deleted && (!own || own.deleted)) continue;
    // Syncthing's rule (lib/db Need): a version at least as new is not needed. Only a record that
    // takes no part in the global version (a change kept on a receive-only folder) is newer.
    const ordering = own && compareVersions(own.version, global.version);
    if (ordering === 'equal' || ordering === 'greater') continue;
    add(result.need, global);
    result.needed.push({ name, global, own, holders: found.holders });
  }
  return result;
}

/**
 * A needed item's records with their blocks, as the index has them now: undefined when the global
 * version changed since the need was computed (a newer need takes it).
 */
export function fullRecords(
  db: IndexDb,
  folder: string,
  item: NeededItem,
  device: string = LOCAL,
): { global: FileRecord; own: FileRecord | undefined } | undefined {
  const versions = db.versionsOf(folder, item.name);
  const global = versions.find((entry) => entry.device === item.holders[0])?.record;
  if (!global || compareVersions(global.version, item.global.version) !== 'equal') return undefined;
  return { global, own: versions.find((entry) => entry.device === device)?.record };
}

/** Syncthing's GET /rest/db/completion answer (and FolderCompletion event) of a need, at a sequence. */
export function completionReport(need: FolderNeed, sequence: number) {
  const items = (tally: Tally) => tally.files + tally.directories + tally.symlinks + tally.deleted;
  return {
    completion: completion(need),
    globalBytes: need.global.bytes,
    globalItems: items(need.global),
    needBytes: need.need.bytes,
    needDeletes: need.need.deleted,
    needItems: items(need.need),
    sequence,
  };
}

/** Syncthing's completion percentage: the share of the global bytes the device has, 95 while only deletions remain. */
export function completion(need: FolderNeed): number {
  const { global, need: lacking } = need;
  if (global.bytes === 0) return lacking.deleted > 0 ? 95 : 100;
  const percent = 100 * (1 - lacking.bytes / global.bytes);
  return lacking.bytes === 0 && lacking.deleted > 0 ? 95 : percent;
}
