import { join } from 'node:path';
import { folderRoot } from '../files/folder-fs.ts';
import { bumpVersion, type FileRecord, withoutSequence } from '../records/file-record.ts';
import type { FileSummary, IndexDb } from '../index-db/index-db.ts';
import { equivalentAt, sameTime } from '../records/versions.ts';
import { globalOfOthers } from '../index-db/global.ts';
import { blockSizeFor } from '../records/blocks.ts';
import { Ignores } from '../scanner/ignores.ts';
import { type HasherPool, HashError } from '../scanner/hasher-pool.ts';
import { describe, type DiskEntry, walk, type WalkProblem } from '../scanner/walk.ts';

export interface ScanTarget {
  id: string;
  path: string;
  markerName: string;
  ignorePerms: boolean;
  modTimeWindowS: number;
  /**
   * A receive-only folder: what changes here is kept as a change of this device alone (Syncthing's
   * FlagLocalReceiveOnly), never a version others take, unless it is what the others have already.
   */
  receiveOnly?: boolean;
  /** Names renamed to their Unicode NFC form (Syncthing's autoNormalize, on by default). */
  autoNormalize?: boolean;
  /** Temporary files older than this many hours are removed (Syncthing's keepTemporariesH); none when absent. */
  keepTemporariesH?: number;
}

export interface ScanChange {
  name: string;
  type: FileRecord['type'];
  action: 'added' | 'modified' | 'deleted' | 'ignored';
}

export interface ScanResult {
  /** How many records were written (each batch goes to `onBatch` as it is written). */
  written: number;
  /** The ignore patterns the scan applied. */
  ignores: Ignores;
  changes: ScanChange[];
  problems: WalkProblem[];
}

export interface ScanOptions {
  folder: ScanTarget;
  db: IndexDb;
  hasher: HasherPool;
  /** This device's short ID: the counter a change bumps. */
  shortId: bigint;
  /** Only these names and what is below them; every name when absent. */
  under?: string[];
  /** Files whose content is read again even when their size and time are as the index has them. */
  rehash?: ReadonlySet<string>;
  /** Called with each batch written, as it is written. */
  onBatch?: (records: FileRecord[]) => void;
  /** Called as files are hashed: bytes done of the bytes to hash. */
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

// Records written per transaction: a crash loses at most a batch of work, never the index.
const BATCH = 500;
// Files walked before their hashing begins: the walk finds the large files of a window before the
// threads start on its small ones, so that the threads hash the large files while this thread records
// the small ones (in walk order, a large file found last was hashed after everything else was recorded).
const WINDOW = 4096;

/**
 * Scans a folder against its index: what did not change (type, size, modification time, permissions,
 * symlink target) is skipped, what changed is hashed off this thread and recorded with a new version,
 * and what is gone is recorded as deleted. Problems (a file unreadable, a name that cannot be
 * synchronized) are returned, and the file's old record, if any, is kept as it was.
 */
export async function scanFolder(options: ScanOptions): Promise<ScanResult> {
  const { folder, db, hasher, shortId } = options;
  // A .stignore that cannot be read stops the scan (an IgnoreError): indexing everything instead
  // would take in what was meant to stay out.
  const ignores = await Ignores.load(folder.path);
  // A name not in NFC (a watcher reports names as they are on disk) is scanned through its parent,
  // whose listing renames it to NFC (see walk.ts).
  const under = options.under?.map((sub) =>
    sub === sub.normalize('NFC') ? sub : sub.slice(0, Math.max(0, sub.lastIndexOf('/'))),
  );
  const root = folderRoot(folder.path);
  const known = db.summaries(folder.id);
  const problems: WalkProblem[] = [];
  const vanished: WalkProblem[] = [];
  const unreadable = new Set<string>();
  const seen = new Set<string>();
  const result: ScanResult = { written: 0, changes: [], problems, ignores };
  let pending: Array<Omit<FileRecord, 'sequence'>> = [];
  // Local additions of a receive-only folder deleted again, that no other device has: forgotten.
  const removed: string[] = [];
  const flush = () => {
    if (removed.length > 0) db.forget(folder.id, removed.splice(0));
    if (pending.length === 0) return;
    const written = db.update(folder.id, pending);
    pending = [];
    result.written += written.length;
    options.onBatch?.(written);
  };
  const record = (
    scanned: Omit<FileRecord, 'sequence'>,
    previous: FileSummary | undefined,
    { asIs = false } = {},
  ) => {
    const next = folder.receiveOnly && !asIs ? receiveOnlyRecord(db, folder, scanned, previous) : scanned;
    if (next === 'forget') {
      removed.push(scanned.name);
      return;
    }
    result.changes.push({
      name: next.name,
      type: next.type,
      action: next.invalid
        ? 'ignored'
        : next.deleted
          ? 'deleted'
          : previous && !previous.deleted && !previous.invalid
            ? 'modified'
            : 'added',
    });
    pending.push(next);
    if (pending.length >= BATCH) flush();
  };
  // A name never indexed starts a new vector: no need to ask the index for an old one.
  const now = BigInt(Math.floor(Date.now() / 1000));
  const versionOf = (name: string, previous: FileSummary | undefined) => {
    const bumped = bumpVersion(
      known.has(name) ? (db.file(folder.id, name)?.version ?? []) : [],
      shortId,
      now,
    );
    // A name ignored here until now holds the version of what the other devices have, not of what is
    // on disk: it comes back as this device's change alone, to meet theirs as a conflict, never to
    // replace it unseen (Syncthing's ShouldConflict: Version.DropOthers).
    return previous?.invalid ? bumped.filter((counter) => counter.id === shortId) : bumped;
  };

  // Hashing runs ahead of recording: at most IN_FLIGHT files at once, recorded in walk order.
  let hashTotal = 0;
  let hashDone = 0;
  type Hashed = { blocks: FileRecord['blocks']; blockSize: number } | 'gone' | 'failed';
  const hashed = async (entry: DiskEntry, previous: FileSummary | undefined): Promise<Hashed> => {
    const blockSize = blockSizeFor(
      entry.size,
      previous && !previous.deleted ? previous.blockSize : undefined,
    );
    hashTotal += entry.size;
    try {
      // Opened by the threads through the folder's files: never through a symlinked parent, never a
      // symlink.
      const blocks = await hasher.hash(join(root, entry.name), entry.size, blockSize, root);
      hashDone += entry.size;
      options.onProgress?.(hashDone, hashTotal);
      return { blocks, blockSize };
    } catch (error) {
      if (error instanceof HashError && error.code === 'ENOENT') return 'gone';
      problems.push({
        name: entry.name,
        error:
          error instanceof HashError && error.code === 'ECHANGED'
            ? `${error.message}; the next scan takes it`
            : describe(error),
      });
      return 'failed';
    }
  };
  // What changed, recorded as it is known: at once for a directory or a symlink, once hashed for a
  // file. The walk runs ahead of the hashing by up to a window of files, so that the threads always
  // have the large files as well as the small ones to work on, while this thread records.
  const settle = (entry: DiskEntry, previous: FileSummary | undefined, outcome?: Hashed) => {
    if (outcome === 'gone') {
      // Named, and recorded as deleted below if the index had it: it is gone either way.
      vanished.push({ name: entry.name, error: 'it disappeared while the folder was scanned' });
      seen.delete(entry.name);
      return;
    }
    if (outcome === 'failed') return;
    // Every field named: a spread of the entry made each record a slow object.
    record(
      {
        name: entry.name,
        type: entry.type,
        size: entry.size,
        permissions: entry.permissions,
        modifiedS: entry.modifiedS,
        modifiedNs: entry.modifiedNs,
        symlinkTarget: entry.symlinkTarget,
        modifiedBy: shortId,
        deleted: false,
        invalid: false,
        // A symlink has no permissions of its own (Syncthing records it so).
        noPermissions: folder.ignorePerms || entry.type === 'symlink',
        version: versionOf(entry.name, previous),
        blockSize: outcome?.blockSize ?? 0,
        blocks: outcome?.blocks ?? [],
      },
      previous,
    );
  };
  // A window of walked files is hashed while the next is walked; never more than two at once.
  let walked: Array<{ entry: DiskEntry; previous: FileSummary | undefined }> = [];
  const hashing: Array<Promise<unknown>> = [];
  const dispatch = async () => {
    hashing.push(
      Promise.all(
        walked.map(({ entry, previous }) =>
          hashed(entry, previous).then((outcome) => settle(entry, previous, outcome)),
        ),
      ),
    );
    walked = [];
    if (hashing.length > 1) await hashing.shift();
  };

  const walking = walk(folder.path, {
    under,
    markerName: folder.markerName,
    problems,
    unreadable,
    ignores,
    autoNormalize: folder.autoNormalize ?? true,
    temporariesBefore:
      folder.keepTemporariesH === undefined ? undefined : Date.now() - folder.keepTemporariesH * 3_600_000,
  });
  walking: for await (const entries of walking) {
    for (const entry of entries) {
      if (options.signal?.aborted) break walking;
      seen.add(entry.name);
      const previous = known.get(entry.name);
      // A change kept while the folder was receive-only is offered once it no longer is.
      const unflag = previous?.receiveOnlyChanged === true && !folder.receiveOnly;
      const reread = options.rehash?.has(entry.name) === true;
      if (previous && !unflag && !reread && unchanged(previous, entry, folder)) continue;
      if (entry.type !== 'file') {
        settle(entry, previous);
        continue;
      }
      walked.push({ entry, previous });
      if (walked.length >= WINDOW) await dispatch();
    }
  }
  await dispatch();
  await Promise.all(hashing);

  // What the index has, in scope, that the walk did not see is gone, unless it sits in a folder that
  // could not be read (unknown, not deleted) or the scan was stopped.
  if (!options.signal?.aborted) {
    const failed = new Set(problems.map((problem) => problem.name));
    const inScope = scopeTest(under);
    for (const [name, previous] of known) {
      if (seen.has(name) || !inScope(name) || underAny(name, unreadable)) continue;
      if (previous.deleted && !previous.invalid) continue;
      if (failed.has(name)) continue;
      const ignored = ignores.ignored(name);
      if (ignored && previous.invalid) continue;
      if (ignored) {
        // Ignored now: kept as it was, without its content, marked ignored (Syncthing's
        // ConvertToIgnoredFileInfo): the version stays, so that no device takes it for a change.
        const full = db.file(folder.id, name);
        if (full)
          record({ ...withoutSequence(full), size: 0, blocks: [], invalid: true }, previous, { asIs: true });
        continue;
      }
      record(
        {
          name,
          type: previous.type,
          size: 0,
          permissions: previous.permissions,
          modifiedS: previous.modifiedS,
          modifiedNs: previous.modifiedNs,
          modifiedBy: shortId,
          deleted: true,
          invalid: false,
          noPermissions: folder.ignorePerms,
          // No longer ignored, and not here: without a version, so that the next pull brings the other
          // devices' version back rather than this device deleting it for them (Syncthing's
          // ShouldConflict on a deletion).
          version: previous.invalid ? [] : versionOf(name, previous),
          blockSize: 0,
          blocks: [],
          symlinkTarget: '',
        },
        previous,
        { asIs: previous.invalid },
      );
    }
  }
  flush();
  problems.push(...vanished);
  // Recorded as hashing ended; reported by name.
  result.changes.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return result;
}

function unchanged(previous: FileSummary, entry: DiskEntry, folder: ScanTarget): boolean {
  if (previous.deleted || previous.invalid || previous.type !== entry.type) return false;
  if (entry.type === 'symlink') return previous.symlinkTarget === entry.symlinkTarget;
  if (!folder.ignorePerms && previous.permissions !== entry.permissions) return false;
  if (entry.type === 'directory') return true;
  return previous.size === entry.size && sameTime(previous, entry, folder.modTimeWindowS);
}

function scopeTest(under: string[] | undefined): (name: string) => boolean {
  if (!under || under.length === 0 || under.includes('')) return () => true;
  return (name) => under.some((sub) => name === sub || name.startsWith(`${sub}/`));
}

function underAny(name: string, folders: ReadonlySet<string>): boolean {
  for (const folder of folders) if (folder === '' || name.startsWith(`${folder}/`)) return true;
  return false;
}

/**
 * A change found on a receive-only folder, as Syncthing records it: marked as this device's alone,
 * unless it is what the other devices have (then their version is taken, and nothing is kept apart); a
 * deletion of a change that was only here is forgotten; a deletion of a change kept here goes without a
 * version, so that the next pull brings the others' version back.
 */
function receiveOnlyRecord(
  db: IndexDb,
  folder: ScanTarget,
  scanned: Omit<FileRecord, 'sequence'>,
  previous: FileSummary | undefined,
): Omit<FileRecord, 'sequence'> | 'forget' {
  const global = globalOfOthers(db, folder.id, scanned.name);
  if (scanned.deleted && !global && previous?.receiveOnlyChanged) return 'forget';
  if (global && equivalentAt(scanned, global, folder)) {
    return { ...withoutSequence(global), receiveOnlyChanged: false };
  }
  const keptBefore = previous?.receiveOnlyChanged === true;
  return {
    ...scanned,
    receiveOnlyChanged: true,
    version: scanned.deleted && keptBefore ? [] : scanned.version,
  };
}
