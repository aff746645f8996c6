import { type FileRecord, isInvalid, SYNTHETIC_SIZE } from '../records/file-record.ts';
import { type FolderCounts, type IndexDb, LOCAL } from './index-db.ts';
import { compareVersions, globalVersion } from '../records/versions.ts';

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

/**
 * The folder's global state and what `device` (this one: LOCAL) needs of it: every name's global
 * version among the devices, and the names where the device has another version (or none, unless the
 * global version is a deletion).
 */
export function folderNeed(db: IndexDb, folder: string, device: string = LOCAL): FolderNeed {
  // Asked for by every status, completion and pull: brought up to date by the names written since it
  // was last asked, and computed whole only when those are not known.
  let known = states.get(db);
  if (!known) states.set(db, (known = new Map()));
  const key = `${folder}\0${device}`;
  let state = known.get(key);
  const changed = state && db.changedSince(state.generation, folder);
  const records = recordsNow(db, folder);
  if (!state || !changed) {
    state = new NeedState(device, (name) => recordsNow(db, folder).of(name));
    // Read as it goes, not gathered first: a folder's every version at once is hundreds of MB at a
    // million names.
    for (const { name, versions } of db.allVersions(folder, true)) state.set(name, versions);
    known.set(key, state);
  } else {
    for (const name of changed) state.set(name, records.of(name));
  }
  state.generation = db.generation;
  return state.answer();
}

// The need of each index, folder and device, kept up to date.
const states = new WeakMap<IndexDb, Map<string, NeedState>>();

type Versions = Array<{ device: string; record: FileRecord }>;

/**
 * A name's records as the index has them now, read once however many devices' needs ask in one turn
 * of the event loop: a summary asks for each device sharing the folder in turn, and each read the
 * same names again (a folder shared with five devices took a second of the worker's thread after one
 * of them pulled it).
 */
function recordsNow(db: IndexDb, folder: string) {
  let shared = sharedRecords.get(db);
  if (!shared || shared.generation !== db.generation || shared.folder !== folder) {
    const made = { generation: db.generation, folder, byName: new Map<string, Versions>() };
    sharedRecords.set(db, made);
    // Kept for the rest of this turn of the event loop only.
    setImmediate(() => {
      if (sharedRecords.get(db) === made) sharedRecords.delete(db);
    }).unref();
    shared = made;
  }
  const now = shared;
  return {
    of: (name: string): Versions => {
      let versions = now.byName.get(name);
      if (!versions) now.byName.set(name, (versions = db.versionsOf(folder, name, true)));
      return versions;
    },
  };
}

const sharedRecords = new WeakMap<
  IndexDb,
  { generation: number; folder: string; byName: Map<string, Versions> }
>();

// A name's part in a device's need, in one number: the global version's kind and size (what it adds
// to the tallies) and whether the device needs it. A record per name took 400 to 800 bytes a name of
// the worker's heap, for each device sharing the folder (a fresh device's need of 100,000 files held
// them all while it was sent them). Sizes past 2^49 (no real file) keep an object.
const KINDS = ['file', 'directory', 'symlink', 'deleted'] as const;
type Kind = (typeof KINDS)[number];
type Part = number | { kind: Kind; size: number; needed: boolean };
const PACKED_SIZE_LIMIT = 2 ** 49;

function packPart(global: FileRecord, needed: boolean): Part {
  const kind: Kind = global.deleted ? 'deleted' : global.type;
  const size = kind === 'file' ? global.size : 0;
  if (size >= PACKED_SIZE_LIMIT) return { kind, size, needed };
  return size * 8 + KINDS.indexOf(kind) * 2 + (needed ? 1 : 0);
}

function unpackPart(part: Part): { kind: Kind; size: number; needed: boolean } {
  if (typeof part !== 'number') return part;
  return { kind: KINDS[(part % 8) >> 1] as Kind, size: Math.floor(part / 8), needed: part % 2 === 1 };
}

function count(tally: Tally, part: Part, sign: number): void {
  const { kind, size } = unpackPart(part);
  if (kind === 'deleted') tally.deleted += sign;
  else if (kind === 'directory') {
    tally.directories += sign;
    tally.bytes += sign * SYNTHETIC_SIZE;
  } else if (kind === 'symlink') {
    tally.symlinks += sign;
    tally.bytes += sign * SYNTHETIC_SIZE;
  } else {
    tally.files += sign;
    tally.bytes += sign * size;
  }
}

/**
 * One device's need of one folder, name by name: each name's part in the tallies, and what is needed.
 * This device's needed items are kept whole (the puller and the REST need list take them at every
 * pull); another device's are read from the index when asked for (GET /rest/db/remoteneed), since only
 * its tallies (completion) are asked for as it is sent a folder.
 */
class NeedState {
  generation = -1;
  readonly #device: string;
  readonly #versionsOf: (name: string) => Versions;
  readonly #global = empty();
  readonly #need = empty();
  readonly #parts = new Map<string, Part>();
  readonly #items: Map<string, NeededItem> | undefined;
  #answer: FolderNeed | undefined;

  constructor(device: string, versionsOf: (name: string) => Versions) {
    this.#device = device;
    this.#versionsOf = versionsOf;
    this.#items = device === LOCAL ? new Map() : undefined;
  }

  /** A name's records now (none: it is gone from the index). */
  set(name: string, versions: Versions): void {
    const before = this.#parts.get(name);
    if (before !== undefined) {
      count(this.#global, before, -1);
      if (unpackPart(before).needed) count(this.#need, before, -1);
      this.#parts.delete(name);
      this.#items?.delete(name);
    }
    this.#answer = undefined;
    const part = partOf(name, versions, this.#device);
    if (!part) return;
    const packed = packPart(part.global, part.needed !== undefined);
    this.#parts.set(name, packed);
    count(this.#global, packed, 1);
    if (part.needed) {
      count(this.#need, packed, 1);
      this.#items?.set(name, part.needed);
    }
  }

  /**
   * The tallies and the needed items, by name; shared, so that callers do not change them. The items
   * are listed when first asked for: a status or a completion needs only the tallies, and listing and
   * sorting every needed name for each (polled while a pull writes) cost more than the rest of it.
   */
  answer(): FolderNeed {
    if (!this.#answer) {
      const parts = this.#parts;
      const items = this.#items;
      const device = this.#device;
      const versionsOf = this.#versionsOf;
      // Current while it is this state's answer: a change (set) drops it.
      const current = () => this.#answer === answer;
      let needed: NeededItem[] | undefined;
      const answer: FolderNeed = {
        global: { ...this.#global },
        need: { ...this.#need },
        get needed() {
          if (!needed) {
            // Listed from the parts as they are now, which must be what the tallies were made of.
            if (!current()) throw new Error("a need's items were asked for after the index changed");
            needed = [];
            if (items) for (const item of items.values()) needed.push(item);
            else {
              for (const [name, part] of parts) {
                const item = unpackPart(part).needed && partOf(name, versionsOf(name), device)?.needed;
                if (item) needed.push(item);
              }
            }
            needed.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
          }
          return needed;
        },
      };
      this.#answer = answer;
    }
    return this.#answer;
  }
}

// A name's global version (none when no device has a valid one), and whether the device needs it.
function partOf(
  name: string,
  versions: Array<{ device: string; record: FileRecord }>,
  device: string,
): { global: FileRecord; needed?: NeededItem } | undefined {
  const found = globalVersion(versions);
  if (!found || isInvalid(found.global.record)) return undefined;
  const global = found.global.record;
  if (found.holders.includes(device)) return { global };
  const own = versions.find((entry) => entry.device === device)?.record;
  if (global.deleted && (!own || own.deleted)) return { global };
  // Syncthing's rule (lib/db Need): a version at least as new is not needed. Only a record that
  // takes no part in the global version (a change kept on a receive-only folder) is newer.
  const ordering = own && compareVersions(own.version, global.version);
  if (ordering === 'equal' || ordering === 'greater') return { global };
  return { global, needed: { name, global, own, holders: found.holders } };
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
  const global = db.file(folder, item.name, item.holders[0]);
  if (!global || compareVersions(global.version, item.global.version) !== 'equal') return undefined;
  return { global, own: db.file(folder, item.name, device) };
}

/**
 * The global version of a name among the other devices (this one left out), if one of them has a
 * valid one: what a receive-only folder compares its own changes with.
 */
export function globalOfOthers(db: IndexDb, folder: string, name: string): FileRecord | undefined {
  const found = globalVersion(db.versionsOf(folder, name).filter((entry) => entry.device !== LOCAL));
  return found && !isInvalid(found.global.record) ? found.global.record : undefined;
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

/** A folder's bytes as Syncthing counts them: its files', and the synthetic size of the rest. */
export function countedBytes(counts: FolderCounts): number {
  return counts.bytes + SYNTHETIC_SIZE * (counts.directories + counts.symlinks);
}
