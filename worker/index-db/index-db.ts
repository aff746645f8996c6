import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import type Database from 'better-sqlite3';
import type { Block } from '../records/blocks.ts';
import { type Counter, FILE_TYPES, type FileRecord, type FileType } from '../records/file-record.ts';

/** The index file in the home. */
export { INDEX_FILE } from '../../shared/home.ts';

/** A file that is not an index this syncd can use: reported, never deleted or overwritten. */
export class IndexDbError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'IndexDbError';
  }
}

// Each schema version is the list of statements that bring the previous one to it (exported for the
// test that migrates an index of an older schema).
export const MIGRATIONS: string[][] = [
  [
    `CREATE TABLE folders (
       folder TEXT PRIMARY KEY,
       index_id TEXT NOT NULL,
       sequence INTEGER NOT NULL DEFAULT 0
     ) WITHOUT ROWID`,
    `CREATE TABLE files (
       folder TEXT NOT NULL,
       device TEXT NOT NULL,
       name TEXT NOT NULL,
       type INTEGER NOT NULL,
       size INTEGER NOT NULL,
       permissions INTEGER NOT NULL,
       modified_s INTEGER NOT NULL,
       modified_ns INTEGER NOT NULL,
       modified_by TEXT NOT NULL,
       deleted INTEGER NOT NULL,
       invalid INTEGER NOT NULL,
       no_permissions INTEGER NOT NULL,
       version TEXT NOT NULL,
       sequence INTEGER NOT NULL,
       block_size INTEGER NOT NULL,
       blocks BLOB NOT NULL,
       symlink_target TEXT NOT NULL,
       PRIMARY KEY (folder, device, name)
     ) WITHOUT ROWID`,
    'CREATE INDEX files_by_sequence ON files (folder, device, sequence)',
  ],
  [
    // Devices that connected without being configured, as Syncthing keeps them for the user to add.
    `CREATE TABLE pending_devices (
       device TEXT PRIMARY KEY,
       name TEXT NOT NULL,
       address TEXT NOT NULL,
       time TEXT NOT NULL
     ) WITHOUT ROWID`,
  ],
  [
    // What is known of each other device's index of a folder: its index ID and the highest sequence
    // received, for the delta indexes of the next connection.
    `CREATE TABLE remote_indexes (
       folder TEXT NOT NULL,
       device TEXT NOT NULL,
       index_id TEXT NOT NULL,
       max_sequence INTEGER NOT NULL,
       PRIMARY KEY (folder, device)
     ) WITHOUT ROWID`,
  ],
  [
    // When each device was last seen, and how long its last connection lasted (GET /rest/stats/device).
    `CREATE TABLE device_stats (
       device TEXT PRIMARY KEY,
       last_seen TEXT NOT NULL,
       last_connection_duration REAL NOT NULL
     ) WITHOUT ROWID`,
  ],
  [
    // Syncthing's local flags of a record: 8 (FlagLocalReceiveOnly) for a change made on a
    // receive-only folder, kept here and never offered to other devices as a version.
    'ALTER TABLE files ADD COLUMN local_flags INTEGER NOT NULL DEFAULT 0',
  ],
  [
    // Folders devices offered that are not shared with them here, as Syncthing keeps them for the user.
    `CREATE TABLE pending_folders (
       folder TEXT NOT NULL,
       device TEXT NOT NULL,
       time TEXT NOT NULL,
       label TEXT NOT NULL,
       receive_encrypted INTEGER NOT NULL,
       remote_encrypted INTEGER NOT NULL,
       PRIMARY KEY (folder, device)
     ) WITHOUT ROWID`,
  ],
  [
    // Every device's record of one name, without a pass over the whole folder.
    'CREATE INDEX files_by_name ON files (folder, name)',
  ],
  [
    // The modifying device's short ID and the version vector packed as bytes (see packId and
    // packVersion), not as decimal text and JSON: 33 of a small file's 150 bytes a row.
    `CREATE TABLE files_packed (
       folder TEXT NOT NULL,
       device TEXT NOT NULL,
       name TEXT NOT NULL,
       type INTEGER NOT NULL,
       size INTEGER NOT NULL,
       permissions INTEGER NOT NULL,
       modified_s INTEGER NOT NULL,
       modified_ns INTEGER NOT NULL,
       modified_by BLOB NOT NULL,
       deleted INTEGER NOT NULL,
       invalid INTEGER NOT NULL,
       no_permissions INTEGER NOT NULL,
       version BLOB NOT NULL,
       sequence INTEGER NOT NULL,
       block_size INTEGER NOT NULL,
       blocks BLOB NOT NULL,
       symlink_target TEXT NOT NULL,
       local_flags INTEGER NOT NULL DEFAULT 0,
       PRIMARY KEY (folder, device, name)
     ) WITHOUT ROWID`,
    `INSERT INTO files_packed SELECT folder, device, name, type, size, permissions, modified_s, modified_ns,
       syncd_pack_id(modified_by), deleted, invalid, no_permissions, syncd_pack_version(version), sequence,
       block_size, blocks, symlink_target, local_flags FROM files`,
    'DROP TABLE files',
    'ALTER TABLE files_packed RENAME TO files',
    'CREATE INDEX files_by_sequence ON files (folder, device, sequence)',
    'CREATE INDEX files_by_name ON files (folder, name)',
  ],
  [
    // Each folder's and device's records counted by kind as they are written, by SQLite itself on
    // every insert, replacement and deletion (replacements delete through recursive_triggers, set at
    // every open): a status counted every record of the folder, 1,000,000 of them while a scan wrote.
    `CREATE TABLE file_counts (
       folder TEXT NOT NULL,
       device TEXT NOT NULL,
       local_flags INTEGER NOT NULL,
       type INTEGER NOT NULL,
       deleted INTEGER NOT NULL,
       count INTEGER NOT NULL,
       bytes INTEGER NOT NULL,
       PRIMARY KEY (folder, device, local_flags, type, deleted)
     ) WITHOUT ROWID`,
    `INSERT INTO file_counts SELECT folder, device, local_flags, type, deleted, COUNT(*), SUM(size)
       FROM files WHERE invalid = 0 GROUP BY folder, device, local_flags, type, deleted`,
    `CREATE TRIGGER files_counted AFTER INSERT ON files WHEN NEW.invalid = 0 BEGIN
       INSERT INTO file_counts VALUES (NEW.folder, NEW.device, NEW.local_flags, NEW.type, NEW.deleted, 1, NEW.size)
         ON CONFLICT DO UPDATE SET count = count + 1, bytes = bytes + excluded.bytes;
     END`,
    `CREATE TRIGGER files_uncounted AFTER DELETE ON files WHEN OLD.invalid = 0 BEGIN
       UPDATE file_counts SET count = count - 1, bytes = bytes - OLD.size
         WHERE folder = OLD.folder AND device = OLD.device AND local_flags = OLD.local_flags
           AND type = OLD.type AND deleted = OLD.deleted;
     END`,
    // Nothing updates a record in place today; were it to, its counts would follow.
    `CREATE TRIGGER files_recounted AFTER UPDATE ON files BEGIN
       UPDATE file_counts SET count = count - 1, bytes = bytes - OLD.size
         WHERE OLD.invalid = 0 AND folder = OLD.folder AND device = OLD.device
           AND local_flags = OLD.local_flags AND type = OLD.type AND deleted = OLD.deleted;
       INSERT INTO file_counts SELECT NEW.folder, NEW.device, NEW.local_flags, NEW.type, NEW.deleted, 1, NEW.size
         WHERE NEW.invalid = 0
         ON CONFLICT DO UPDATE SET count = count + 1, bytes = bytes + excluded.bytes;
     END`,
  ],
];
export const SCHEMA_VERSION = MIGRATIONS.length;
// What identifies the file as ours: SQLite's application_id ("sync" in ASCII).
const APPLICATION_ID = 0x73796e63;
/** The device column of this device's own files; other devices' files come with the connections. */
export const LOCAL = '';

interface FileRow {
  name: string;
  type: number;
  size: number;
  permissions: number;
  modified_s: number;
  modified_ns: number;
  modified_by: Buffer;
  deleted: number;
  invalid: number;
  no_permissions: number;
  version: Buffer;
  sequence: number;
  block_size: number;
  blocks: Buffer;
  symlink_target: string;
  local_flags: number;
}

type SummaryRow = Pick<
  FileRow,
  | 'name'
  | 'type'
  | 'size'
  | 'permissions'
  | 'modified_s'
  | 'modified_ns'
  | 'deleted'
  | 'invalid'
  | 'block_size'
  | 'symlink_target'
  | 'local_flags'
>;

/** What a scan compares a file on disk with: a record without its blocks and version. */
export type FileSummary = Pick<
  FileRecord,
  | 'type'
  | 'size'
  | 'permissions'
  | 'modifiedS'
  | 'modifiedNs'
  | 'deleted'
  | 'invalid'
  | 'blockSize'
  | 'symlinkTarget'
  | 'receiveOnlyChanged'
>;

/** Syncthing's GET /rest/stats/device entry of a device. */
export interface DeviceStats {
  lastSeen: string;
  lastConnectionDurationS: number;
}

/** A folder a device offered that is not shared with it here: what its ClusterConfig said, and when. */
export interface PendingFolder {
  folder: string;
  device: string;
  time: string;
  label: string;
  receiveEncrypted: boolean;
  remoteEncrypted: boolean;
}

/** A device that connected without being configured: its ID, the name its Hello gave, where from, when. */
export interface PendingDevice {
  device: string;
  name: string;
  address: string;
  time: string;
}

export interface FolderCounts {
  files: number;
  directories: number;
  symlinks: number;
  deleted: number;
  bytes: number;
}

// Every column but the blocks, which read as none.
const BRIEF_COLUMNS = `folder, device, name, type, size, permissions, modified_s, modified_ns, modified_by, deleted,
  invalid, no_permissions, version, sequence, block_size, X'' AS blocks, symlink_target, local_flags`;

// What a record in brief is made of (see summaryOf).
const SUMMARY_COLUMNS = `name, type, size, permissions, modified_s, modified_ns, deleted, invalid, block_size,
  symlink_target, local_flags`;

/** Writes remembered by name (see IndexDb.changedSince). */
const JOURNAL_WRITES = 256;
/** Names of a device's records replaced at once that are still told name by name (see #replaced). */
const REPLACED_NAMES = 10_000;

/** Syncthing's FlagLocalReceiveOnly. */
const RECEIVE_ONLY_FLAG = 8;

/**
 * The index database: SQLite in WAL mode, one file in the home, opened by the worker that holds the
 * service. Every change is a transaction, so a worker killed in the middle of one leaves the index as
 * it was before it. A file that is not SQLite, or SQLite of another program, or of a newer schema, is
 * an IndexDbError and is left untouched.
 */
export class IndexDb {
  readonly #db: Database.Database;
  readonly #statements;
  #generation = 0;

  private constructor(db: Database.Database) {
    this.#db = db;
    this.#statements = {
      folder: db.prepare<[string], { index_id: string; sequence: number }>(
        'SELECT index_id, sequence FROM folders WHERE folder = ?',
      ),
      addFolder: db.prepare('INSERT OR IGNORE INTO folders (folder, index_id, sequence) VALUES (?, ?, 0)'),
      setSequence: db.prepare('UPDATE folders SET sequence = ? WHERE folder = ?'),
      file: db.prepare<[string, string, string], FileRow>(
        'SELECT * FROM files WHERE folder = ? AND device = ? AND name = ?',
      ),
      fileBrief: db.prepare<[string, string, string], FileRow>(
        `SELECT ${BRIEF_COLUMNS} FROM files WHERE folder = ? AND device = ? AND name = ?`,
      ),
      files: db.prepare<[string, string], FileRow>(
        'SELECT * FROM files WHERE folder = ? AND device = ? ORDER BY name',
      ),
      put: db.prepare(
        `INSERT OR REPLACE INTO files (folder, device, name, type, size, permissions, modified_s, modified_ns,
           modified_by, deleted, invalid, no_permissions, version, sequence, block_size, blocks, symlink_target,
           local_flags)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      counts: db.prepare<
        [string, string, number],
        { type: number; deleted: number; count: number; bytes: number }
      >(
        `SELECT type, deleted, count, bytes FROM file_counts
         WHERE folder = ? AND device = ? AND local_flags = ? AND count > 0`,
      ),
      summary: db.prepare<[string, string, string], SummaryRow>(
        `SELECT ${SUMMARY_COLUMNS} FROM files WHERE folder = ? AND device = ? AND name = ?`,
      ),
      summaries: db.prepare<[string, string], SummaryRow>(
        `SELECT ${SUMMARY_COLUMNS} FROM files WHERE folder = ? AND device = ?`,
      ),
      folderIds: db.prepare<[], { folder: string }>(
        'SELECT folder FROM folders UNION SELECT DISTINCT folder FROM files',
      ),
      dropFolder: db.prepare('DELETE FROM folders WHERE folder = ?'),
      pendingDevices: db.prepare<[], PendingDevice>(
        'SELECT device, name, address, time FROM pending_devices ORDER BY device',
      ),
      putPendingDevice: db.prepare(
        'INSERT OR REPLACE INTO pending_devices (device, name, address, time) VALUES (?, ?, ?, ?)',
      ),
      dropPendingDevice: db.prepare('DELETE FROM pending_devices WHERE device = ?'),
      pendingFolders: db.prepare<
        [],
        {
          folder: string;
          device: string;
          time: string;
          label: string;
          receive_encrypted: number;
          remote_encrypted: number;
        }
      >('SELECT * FROM pending_folders ORDER BY folder, device'),
      putPendingFolder: db.prepare(
        `INSERT OR REPLACE INTO pending_folders (folder, device, time, label, receive_encrypted, remote_encrypted)
         VALUES (?, ?, ?, ?, ?, ?)`,
      ),
      dropPendingFolder: db.prepare<[string, string]>(
        'DELETE FROM pending_folders WHERE folder = ? AND device = ?',
      ),
      deviceStats: db.prepare<[], { device: string; last_seen: string; last_connection_duration: number }>(
        'SELECT device, last_seen, last_connection_duration FROM device_stats',
      ),
      putDeviceStats: db.prepare(
        'INSERT OR REPLACE INTO device_stats (device, last_seen, last_connection_duration) VALUES (?, ?, ?)',
      ),
      remoteIndex: db.prepare<[string, string], { index_id: string; max_sequence: number }>(
        'SELECT index_id, max_sequence FROM remote_indexes WHERE folder = ? AND device = ?',
      ),
      putRemoteIndex: db.prepare(
        'INSERT OR REPLACE INTO remote_indexes (folder, device, index_id, max_sequence) VALUES (?, ?, ?, ?)',
      ),
      dropRemoteIndex: db.prepare('DELETE FROM remote_indexes WHERE folder = ? AND device = ?'),
      dropDeviceFiles: db.prepare('DELETE FROM files WHERE folder = ? AND device = ?'),
      deviceNames: db
        .prepare<[string, string], string>('SELECT name FROM files WHERE folder = ? AND device = ?')
        .pluck(),
      allVersions: db.prepare<[string], FileRow & { device: string }>(
        'SELECT * FROM files WHERE folder = ? ORDER BY name',
      ),
      // Without the blocks: what the global versions and needs are computed from.
      allVersionsBrief: db.prepare<[string], FileRow & { device: string }>(
        `SELECT ${BRIEF_COLUMNS} FROM files WHERE folder = ? ORDER BY name`,
      ),
      hasRemote: db.prepare<[string], { n: number }>(
        "SELECT EXISTS (SELECT 1 FROM files WHERE folder = ? AND device != '') AS n",
      ),
      // SQLite's planner, without statistics, would take the primary key's folder prefix: a pass over
      // the whole folder for each name.
      versionsOf: db.prepare<[string, string], FileRow & { device: string }>(
        'SELECT * FROM files INDEXED BY files_by_name WHERE folder = ? AND name = ?',
      ),
      versionsOfBrief: db.prepare<[string, string], FileRow & { device: string }>(
        `SELECT ${BRIEF_COLUMNS} FROM files INDEXED BY files_by_name WHERE folder = ? AND name = ?`,
      ),
      since: db.prepare<[string, string, number, number], FileRow>(
        'SELECT * FROM files WHERE folder = ? AND device = ? AND sequence > ? ORDER BY sequence LIMIT ?',
      ),
      dropFiles: db.prepare('DELETE FROM files WHERE folder = ?'),
      forget: db.prepare<[string, string]>(`DELETE FROM files WHERE folder = ? AND device = '' AND name = ?`),
      dropRemoteIndexes: db.prepare('DELETE FROM remote_indexes WHERE folder = ?'),
      // instr, not LIKE: LIKE folds case, where Syncthing's isConflict looks for the marker as it is.
      conflictCopies: db.prepare<[string], SummaryRow>(
        `SELECT ${SUMMARY_COLUMNS} FROM files WHERE folder = ? AND device = '' AND type = 0 AND deleted = 0
         AND invalid = 0 AND instr(name, '.sync-conflict-') > 0 ORDER BY name`,
      ),
    };
  }

  /** Opens (or creates) the index at `path`, bringing its schema up to date. */
  static async open(path: string): Promise<IndexDb> {
    await checkHeader(path);
    let db: Database.Database;
    try {
      // Loaded when first needed: a worker answers HTTP before it opens the index, and the native
      // module costs its start-up time.
      const { default: open } = await import('better-sqlite3');
      db = new open(path);
    } catch (error) {
      throw new IndexDbError(`${path} cannot be opened: ${(error as Error).message}`, { cause: error });
    }
    try {
      migrate(db, path);
      return new IndexDb(db);
    } catch (error) {
      db.close();
      if (error instanceof IndexDbError) throw error;
      throw new IndexDbError(`${path} is not a usable index: ${(error as Error).message}`, { cause: error });
    }
  }

  close(): void {
    this.#db.close();
  }

  /** Changes with every write of records: what was computed from them at the same value still holds. */
  get generation(): number {
    return this.#generation;
  }

  // Each write's folder and names (undefined: the whole folder), the last JOURNAL_WRITES of them:
  // what lets a need be brought up to date by the names that changed, not computed again whole.
  readonly #journal: Array<{ generation: number; folder: string; names: readonly string[] | undefined }> = [];

  /**
   * Changes with every write that may change this device's records; other devices' index updates
   * leave it, so that what was read of this device's files holds across them (a device pulling from
   * us sends them all along).
   */
  get localGeneration(): number {
    return this.#localGeneration;
  }

  #localGeneration = 0;

  #written(folder: string, names: readonly string[] | undefined, local = true): void {
    this.#generation += 1;
    if (local) this.#localGeneration += 1;
    this.#journal.push({ generation: this.#generation, folder, names });
    if (this.#journal.length > JOURNAL_WRITES) this.#journal.shift();
  }

  /**
   * The names of a folder written since `generation`; undefined when that is not known (too long ago,
   * or a change of the whole folder), and the caller must look at the whole folder.
   */
  changedSince(generation: number, folder: string): Set<string> | undefined {
    const names = new Set<string>();
    if (generation === this.#generation) return names;
    const first = this.#journal[0];
    if (!first || first.generation > generation + 1) return undefined;
    for (const entry of this.#journal) {
      if (entry.generation <= generation || entry.folder !== folder) continue;
      if (!entry.names) return undefined;
      for (const name of entry.names) names.add(name);
    }
    return names;
  }

  /** The folder's index ID (a random 64-bit value, made when the folder is first indexed) and sequence. */
  folder(folder: string): { indexId: bigint; sequence: number } {
    this.#statements.addFolder.run(folder, randomBytes(8).readBigUInt64BE(0).toString());
    const row = this.#statements.folder.get(folder) as { index_id: string; sequence: number };
    return { indexId: BigInt(row.index_id), sequence: row.sequence };
  }

  /** A device's record of a name (this device's by default); with `brief`, without its blocks. */
  file(folder: string, name: string, device = LOCAL, brief = false): FileRecord | undefined {
    const row = (brief ? this.#statements.fileBrief : this.#statements.file).get(folder, device, name);
    return row && fromRow(row);
  }

  /**
   * A record in brief, without its version and blocks: for a device's every request of a block, where
   * making the whole record cost as much as finding it.
   */
  summary(folder: string, name: string, device = LOCAL): FileSummary | undefined {
    const row = this.#statements.summary.get(folder, device, name);
    return row && summaryOf(row);
  }

  /** Every record of the folder for the device, by name. */
  files(folder: string, device = LOCAL): FileRecord[] {
    return this.#statements.files.all(folder, device).map(fromRow);
  }

  /** Every record of the folder in brief, by name: what a scan needs to see what changed. */
  summaries(folder: string, device = LOCAL): Map<string, FileSummary> {
    const summaries = new Map<string, FileSummary>();
    for (const row of this.#statements.summaries.iterate(folder, device)) {
      summaries.set(row.name, summaryOf(row));
    }
    return summaries;
  }

  /** Visits every record by name without holding them all: for folders of many files. */
  *iterate(folder: string, device = LOCAL): Generator<FileRecord> {
    for (const row of this.#statements.files.iterate(folder, device)) yield fromRow(row);
  }

  /**
   * This device's files with Syncthing's conflict marker in their names, by name, one at a time: the
   * rows are sifted by SQLite, without the blocks, and a caller that has enough stops reading.
   */
  *conflictCopies(folder: string): Generator<FileSummary & { name: string }> {
    for (const row of this.#statements.conflictCopies.iterate(folder)) {
      yield Object.assign(summaryOf(row), { name: row.name });
    }
  }

  /**
   * Records changed local files in one transaction, each with the folder's next sequence number, and
   * returns them as stored. Nothing is written if anything fails.
   */
  update(folder: string, changed: Array<Omit<FileRecord, 'sequence'>>): FileRecord[] {
    this.#written(
      folder,
      changed.map((record) => record.name),
    );
    return this.#db.transaction(() => {
      let { sequence } = this.folder(folder);
      const stored = changed.map((record) => {
        sequence += 1;
        const withSequence = { ...record, sequence };
        this.#statements.put.run(...toRow(folder, LOCAL, withSequence));
        return withSequence;
      });
      this.#statements.setSequence.run(sequence, folder);
      return stored;
    })();
  }

  /**
   * The folder's records of the device by kind, as Syncthing counts them: those without flags, or (with
   * `receiveOnlyChanged`) this device's changes kept on a receive-only folder. Ignored ones are in neither.
   */
  counts(folder: string, device = LOCAL, receiveOnlyChanged = false): FolderCounts {
    const counts: FolderCounts = { files: 0, directories: 0, symlinks: 0, deleted: 0, bytes: 0 };
    const flags = receiveOnlyChanged ? RECEIVE_ONLY_FLAG : 0;
    for (const row of this.#statements.counts.all(folder, device, flags)) {
      if (row.deleted) counts.deleted += row.count;
      else if (row.type === FILE_TYPES.directory) counts.directories += row.count;
      else if (row.type === FILE_TYPES.symlink) counts.symlinks += row.count;
      else {
        counts.files += row.count;
        counts.bytes += row.bytes;
      }
    }
    return counts;
  }

  /** Every folder the index has anything of. */
  folderIds(): string[] {
    return this.#statements.folderIds.all().map((row) => row.folder);
  }

  /** What is known of a device's index of the folder: its index ID and highest sequence (0 and 0: nothing). */
  remoteIndex(folder: string, device: string): { indexId: bigint; maxSequence: number } {
    const row = this.#statements.remoteIndex.get(folder, device);
    return row
      ? { indexId: BigInt(row.index_id), maxSequence: row.max_sequence }
      : { indexId: 0n, maxSequence: 0 };
  }

  /**
   * Forgets what a device sent of the folder, and records the index ID it announces now (0: nothing to
   * keep), as a device's new index ID or its reset asks.
   */
  resetRemote(folder: string, device: string, indexId: bigint): void {
    this.#written(folder, this.#replaced(folder, device, []), device === LOCAL);
    this.#db.transaction(() => {
      this.#statements.dropDeviceFiles.run(folder, device);
      if (indexId === 0n) this.#statements.dropRemoteIndex.run(folder, device);
      else this.#statements.putRemoteIndex.run(folder, device, indexId.toString(), 0);
    })();
  }

  /**
   * Records files a device sent (an Index replaces what it sent before, `replace`; an IndexUpdate
   * adds to it), with the highest sequence seen, in one transaction.
   */
  putRemote(folder: string, device: string, records: FileRecord[], replace: boolean): void {
    const names = records.map((record) => record.name);
    this.#written(folder, replace ? this.#replaced(folder, device, names) : names, device === LOCAL);
    this.#db.transaction(() => {
      const known = this.remoteIndex(folder, device);
      if (replace) this.#statements.dropDeviceFiles.run(folder, device);
      let maxSequence = replace ? 0 : known.maxSequence;
      for (const record of records) {
        this.#statements.put.run(...toRow(folder, device, record));
        if (record.sequence > maxSequence) maxSequence = record.sequence;
      }
      this.#statements.putRemoteIndex.run(folder, device, known.indexId.toString(), maxSequence);
    })();
  }

  /**
   * The names a device's records are replaced at: those it had and those it has now. Undefined (the
   * whole folder) past REPLACED_NAMES, where looking at the whole folder costs no more. A device new
   * to the folder changes nothing until it sends something, where it made every need start over.
   */
  #replaced(folder: string, device: string, names: string[]): string[] | undefined {
    if (names.length > REPLACED_NAMES) return undefined;
    const had = this.#statements.deviceNames.all(folder, device);
    return had.length + names.length > REPLACED_NAMES ? undefined : [...had, ...names];
  }

  /** Whether another device has sent anything of the folder. */
  hasRemote(folder: string): boolean {
    return (this.#statements.hasRemote.get(folder)?.n ?? 0) === 1;
  }

  /**
   * Every name of the folder with every device's record of it (this device's as LOCAL), by name; with
   * `brief`, the records come without their blocks (much less to read, for counts and needs).
   */
  *allVersions(
    folder: string,
    brief = false,
  ): Generator<{ name: string; versions: Array<{ device: string; record: FileRecord }> }> {
    let current: { name: string; versions: Array<{ device: string; record: FileRecord }> } | undefined;
    const statement = brief ? this.#statements.allVersionsBrief : this.#statements.allVersions;
    for (const row of statement.iterate(folder)) {
      if (current && current.name !== row.name) {
        yield current;
        current = undefined;
      }
      current ??= { name: row.name, versions: [] };
      current.versions.push({ device: row.device, record: fromRow(row) });
    }
    if (current) yield current;
  }

  /** Every device's record of one name (this device's as LOCAL); with `brief`, without their blocks. */
  versionsOf(folder: string, name: string, brief = false): Array<{ device: string; record: FileRecord }> {
    const statement = brief ? this.#statements.versionsOfBrief : this.#statements.versionsOf;
    return statement.all(folder, name).map((row) => ({ device: row.device, record: fromRow(row) }));
  }

  /** This device's records of the folder with a sequence above `after`, in sequence order, at most `limit`. */
  localSince(folder: string, after: number, limit: number): FileRecord[] {
    return this.#statements.since.all(folder, LOCAL, after, limit).map(fromRow);
  }

  /** When each device was last seen and how long its last connection lasted, by device ID. */
  deviceStats(): Map<string, DeviceStats> {
    return new Map(
      this.#statements.deviceStats
        .all()
        .map((row) => [
          row.device,
          { lastSeen: row.last_seen, lastConnectionDurationS: row.last_connection_duration },
        ]),
    );
  }

  setDeviceStats(device: string, stats: DeviceStats): void {
    this.#statements.putDeviceStats.run(device, stats.lastSeen, stats.lastConnectionDurationS);
  }

  /** Devices that connected unconfigured, by device ID. */
  pendingDevices(): PendingDevice[] {
    return this.#statements.pendingDevices.all();
  }

  /** Records (or renews) a pending device; true when it was not pending before. */
  addPendingDevice(device: PendingDevice): boolean {
    const known = this.pendingDevices().some((pending) => pending.device === device.device);
    this.#statements.putPendingDevice.run(device.device, device.name, device.address, device.time);
    return !known;
  }

  pendingFolders(): PendingFolder[] {
    return this.#statements.pendingFolders.all().map((row) => ({
      folder: row.folder,
      device: row.device,
      time: row.time,
      label: row.label,
      receiveEncrypted: row.receive_encrypted === 1,
      remoteEncrypted: row.remote_encrypted === 1,
    }));
  }

  /** Records (or renews) what devices offer, in one transaction. */
  putPendingFolders(entries: readonly PendingFolder[]): void {
    this.#db.transaction(() => {
      for (const { folder, device, time, label, receiveEncrypted, remoteEncrypted } of entries) {
        this.#statements.putPendingFolder.run(
          folder,
          device,
          time,
          label,
          +receiveEncrypted,
          +remoteEncrypted,
        );
      }
    })();
  }

  /** Forgets what a device offered of a folder; true when it was pending. */
  dropPendingFolder(folder: string, device: string): boolean {
    return this.#statements.dropPendingFolder.run(folder, device).changes > 0;
  }

  /** Forgets a pending device; true when it was pending. */
  dropPendingDevice(device: string): boolean {
    return this.#statements.dropPendingDevice.run(device).changes > 0;
  }

  /**
   * Removes this device's records of these names without a trace (no deletion recorded): for what
   * never was anything but a change kept on a receive-only folder.
   */
  forget(folder: string, names: string[]): void {
    this.#written(folder, [...names]);
    this.#db.transaction(() => {
      for (const name of names) this.#statements.forget.run(folder, name);
    })();
  }

  /** Erases a folder's index, its index ID included: the next scan makes a new one. */
  drop(folder: string): void {
    this.#written(folder, undefined);
    this.#db.transaction(() => {
      this.#statements.dropFiles.run(folder);
      this.#statements.dropRemoteIndexes.run(folder);
      this.#statements.dropFolder.run(folder);
    })();
  }
}

async function checkHeader(path: string): Promise<void> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new IndexDbError(`${path} cannot be read: ${(error as Error).message}`, { cause: error });
  }
  try {
    const header = Buffer.alloc(16);
    const { bytesRead } = await handle.read(header, 0, 16, 0);
    if (bytesRead === 0) return;
    if (header.toString('latin1') !== 'SQLite format 3\0') {
      throw new IndexDbError(
        `${path} is not an SQLite database: it was not written by syncd; move it away to have a new index made`,
      );
    }
  } finally {
    await handle.close();
  }
}

function migrate(db: Database.Database, path: string): void {
  // Only read until the file is known to be ours: another program's database is left as it was.
  const application = db.pragma('application_id', { simple: true }) as number;
  const version = db.pragma('user_version', { simple: true }) as number;
  const tables = db.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table'").get() as {
    n: number;
  };
  if (application !== APPLICATION_ID && (application !== 0 || tables.n > 0)) {
    throw new IndexDbError(
      `${path} is an SQLite database of another program; move it away to have a new index made`,
    );
  }
  if (version > SCHEMA_VERSION) {
    throw new IndexDbError(
      `${path} has index schema ${version}, newer than this syncd's ${SCHEMA_VERSION}: run that syncd, or move the file away`,
    );
  }
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  // A replacement (INSERT OR REPLACE) fires the deletion's trigger too: file_counts stays true.
  db.pragma('recursive_triggers = ON');
  // What the migration to packed columns converts with (schema 8).
  db.function('syncd_pack_id', { deterministic: true }, (text) => packId(BigInt(text as string)));
  db.function('syncd_pack_version', { deterministic: true }, (json) =>
    packVersion(
      (JSON.parse(json as string) as Array<[string, string]>).map(([id, value]) => ({
        id: BigInt(id),
        value: BigInt(value),
      })),
    ),
  );
  db.transaction(() => {
    for (let next = version; next < SCHEMA_VERSION; next++) {
      for (const statement of MIGRATIONS[next] as string[]) db.exec(statement);
    }
    db.pragma(`application_id = ${APPLICATION_ID}`);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  })();
}

// A short ID as 8 bytes, big-endian: an unsigned 64-bit value SQLite's integers (signed) cannot hold.
function packId(id: bigint): Buffer {
  const packed = Buffer.allocUnsafe(8);
  packed.writeBigUInt64BE(BigInt.asUintN(64, id));
  return packed;
}

// A version vector as 16 bytes a counter: the device's short ID, then the value, each big-endian.
function packVersion(version: Counter[]): Buffer {
  const packed = Buffer.allocUnsafe(version.length * 16);
  version.forEach((counter, i) => {
    packed.writeBigUInt64BE(BigInt.asUintN(64, counter.id), i * 16);
    packed.writeBigUInt64BE(BigInt.asUintN(64, counter.value), i * 16 + 8);
  });
  return packed;
}

function unpackVersion(packed: Buffer): Counter[] {
  const version: Counter[] = [];
  for (let at = 0; at + 16 <= packed.length; at += 16) {
    version.push({ id: packed.readBigUInt64BE(at), value: packed.readBigUInt64BE(at + 8) });
  }
  return version;
}

// Blocks packed 40 bytes each: size (4), SHA-256 (32), Adler-32 (4); offsets follow from the sizes.
function packBlocks(blocks: Block[]): Buffer {
  const packed = Buffer.allocUnsafe(blocks.length * 40);
  blocks.forEach((block, i) => {
    packed.writeUInt32BE(block.size, i * 40);
    block.hash.copy(packed, i * 40 + 4);
    packed.writeUInt32BE(block.weakHash, i * 40 + 36);
  });
  return packed;
}

function unpackBlocks(packed: Buffer): Block[] {
  const blocks: Block[] = [];
  let offset = 0;
  for (let at = 0; at + 40 <= packed.length; at += 40) {
    const size = packed.readUInt32BE(at);
    blocks.push({
      offset,
      size,
      hash: Buffer.from(packed.subarray(at + 4, at + 36)),
      weakHash: packed.readUInt32BE(at + 36),
    });
    offset += size;
  }
  return blocks;
}

const typeNames = Object.fromEntries(
  Object.entries(FILE_TYPES).map(([name, value]) => [value, name]),
) as Record<number, FileType>;

function summaryOf(row: SummaryRow): FileSummary {
  const summary: FileSummary = {
    type: typeNames[row.type] ?? 'file',
    size: row.size,
    permissions: row.permissions,
    modifiedS: row.modified_s,
    modifiedNs: row.modified_ns,
    deleted: row.deleted === 1,
    invalid: row.invalid === 1,
    blockSize: row.block_size,
    symlinkTarget: row.symlink_target,
  };
  if (row.local_flags & RECEIVE_ONLY_FLAG) summary.receiveOnlyChanged = true;
  return summary;
}

// The summary's object grown into the record's, not spread into a new one: spreading made the
// record's decoding about half of reading an index (2,000 records: about 8 µs each).
function fromRow(row: FileRow): FileRecord {
  const record = summaryOf(row) as FileRecord;
  record.name = row.name;
  record.modifiedBy = row.modified_by.readBigUInt64BE(0);
  record.noPermissions = row.no_permissions === 1;
  record.version = unpackVersion(row.version);
  record.sequence = row.sequence;
  record.blocks = unpackBlocks(row.blocks);
  return record;
}

// The values of a row, in the order of the INSERT's columns.
function toRow(folder: string, device: string, record: FileRecord) {
  return [
    folder,
    device,
    record.name,
    FILE_TYPES[record.type],
    record.size,
    record.permissions,
    record.modifiedS,
    record.modifiedNs,
    packId(record.modifiedBy),
    record.deleted ? 1 : 0,
    record.invalid ? 1 : 0,
    record.noPermissions ? 1 : 0,
    packVersion(record.version),
    record.sequence,
    record.blockSize,
    packBlocks(record.blocks),
    record.symlinkTarget,
    record.receiveOnlyChanged ? RECEIVE_ONLY_FLAG : 0,
  ] as const;
}
