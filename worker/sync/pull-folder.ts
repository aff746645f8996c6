import type { Stats } from 'node:fs';
import { shortIdString } from '../../shared/device-id.ts';
import type { Logger } from '../../shared/logger.ts';
import type { BlockRequest } from '../bep/block-request.ts';
import type { EventLog } from '../events/event-log.ts';
import { chmodFd, closeFd, readAt, sizeOfFd, syncFd, timesFd, truncateFd, writeAt } from '../files/fd.ts';
import {
  baseOf,
  type FolderDirectory,
  FolderFs,
  isTemporary,
  NotADirectoryError,
  parentOf,
  temporaryName,
  TraversesSymlinkError,
} from '../files/folder-fs.ts';
import { type DiskSpace, FreeSpace } from '../files/disk-space.ts';
import { type FileRecord, withoutSequence } from '../records/file-record.ts';
import { type IndexDb, LOCAL } from '../index-db/index-db.ts';
import { hasSha256 } from '../checksums/sha256.ts';
import type { Ignores } from '../scanner/ignores.ts';
import type { Versioner } from '../versioning/versioner.ts';
import type { BlockWriter } from './block-writer.ts';
import { keepConflict } from './conflicts.ts';
import { compareVersions, equivalent } from '../records/versions.ts';
import { folderNeed, fullRecords, type NeededItem } from '../index-db/global.ts';
import { ByteBudget } from './byte-budget.ts';
import type { PullPriority } from './pull-priority.ts';
import { CaseNames, caseConflict } from './case-names.ts';
import { logSynced } from './synced-line.ts';
import type { BlockSource, DownloadProgress } from './download-progress.ts';

/** What a pull needs of the folder and of the devices. */
export interface PullOptions {
  folder: {
    id: string;
    path: string;
    ignorePerms: boolean;
    ignoreDelete?: boolean;
    label?: string;
    /** Conflict copies kept of a file, the newest first (-1: all; 0: none, the losing version goes). */
    maxConflicts?: number;
    /** The order files are pulled in (Syncthing's folder `order`); default random. */
    order?: PullOrder;
    /** The folder's marker, internal to it as `.stfolder` is. */
    markerName?: string;
    /** Free space to leave on the folder's disk (Syncthing's minDiskFree); a file that would not fit waits. */
    minDiskFree?: DiskSpace;
    /** What is never pulled, changed or deleted here (the folder's .stignore). */
    ignores?: Ignores;
    /** false (Syncthing's default): a new name that differs from one on disk only in case is refused. */
    caseSensitiveFS?: boolean;
    /** Where a file deleted or replaced for another device goes first (the folder's versioning). */
    versioner?: Versioner;
    /** Files a user asked to have first, taken before `order`'s. */
    priority?: PullPriority;
  };
  db: IndexDb;
  /** Devices connected now. */
  connected: () => ReadonlySet<string>;
  /** Asks a device for a block (see DeviceConnections.request). */
  request: (device: string, block: BlockRequest) => Promise<Uint8Array>;
  /** Checks received blocks and writes them (the service's one, whose threads pulls share). */
  writer: BlockWriter;
  /** Records just written to the local index, for the devices that share the folder. */
  recorded: (records: FileRecord[]) => void;
  events: EventLog;
  logger: Logger;
  signal?: AbortSignal;
  /** Where each file's blocks come from, for DownloadProgress. */
  progress?: DownloadProgress;
  /** Told of each item before and after it is written (its watcher takes no notice of them). */
  writes?: { started: (name: string) => void; finished: (name: string) => void };
}

/** Syncthing's folder `order`: which files a pull takes first. */
export type PullOrder =
  | 'random'
  | 'alphabetic'
  | 'smallestFirst'
  | 'largestFirst'
  | 'oldestFirst'
  | 'newestFirst';

export interface PullProblem {
  name: string;
  error: string;
}

// Blocks asked for at once, per file; files pulled at once; pulled versions recorded per transaction.
const IN_FLIGHT = 64;
const FILES_AT_ONCE = 32;
const RECORD_BATCH = 100;
// Blocks' bytes held in memory at once by a pull, whatever the number of files and blocks under way.
const BLOCK_BYTES_AT_ONCE = 64 * 1024 * 1024;

/**
 * Brings the folder to the global version of everything other devices have of it, as Syncthing's
 * puller does: directories first, then files and symlinks, then deletions (deepest first). A file is
 * built in `.syncthing.NAME.tmp` from blocks already there (a pull resumed), blocks of the old version,
 * and blocks asked of the devices that have the new one, each checked against its SHA-256; then it gets
 * its permissions and modification time and is renamed into place. Nothing on disk that differs from
 * what the index says (a change not yet scanned) is touched: it waits for the next scan. A local
 * version that loses a conflict is kept as NAME.sync-conflict-YYYYMMDD-HHMMSS-MODIFIER.EXT.
 */
export async function pullFolder(options: PullOptions): Promise<{
  pulled: number;
  problems: PullProblem[];
  /** Names to scan at once: conflict copies made, directories whose deletion found unknown entries. */
  toScan: string[];
  /** The last item pulled, for GET /rest/stats/folder. */
  last?: { name: string; deleted: boolean; at: Date };
}> {
  const { folder, db } = options;
  const fs = new FolderFs(folder.path, folder.markerName);
  const described = folderDescription(folder);
  const space = new FreeSpace(fs.root, folder.minDiskFree, described);
  const cases = new CaseNames();
  // What the global versions say this device needs; with ignoreDelete, other devices' deletions stay undone.
  const needed = folderNeed(db, folder.id).needed.filter(
    (item) => !(item.global.deleted && folder.ignoreDelete),
  );
  // An ignored name is left as it is on disk, and recorded as the version needed, marked ignored and
  // without content (Syncthing's SetIgnored in processNeeded): needed no more, and offered to the
  // other devices as invalid, so that none counts it as needed from here.
  const ignored = needed.filter((item) => folder.ignores?.ignored(item.name));
  if (ignored.length > 0) {
    const marked = ignored.map((item) => ({
      ...withoutSequence(item.global),
      size: 0,
      blocks: [],
      invalid: true,
    }));
    for (let at = 0; at < marked.length; at += RECORD_BATCH) {
      options.recorded(db.update(folder.id, marked.slice(at, at + RECORD_BATCH)));
    }
  }
  const work = ignored.length > 0 ? needed.filter((item) => !folder.ignores?.ignored(item.name)) : needed;
  const rank = (entry: (typeof work)[number]) =>
    entry.global.deleted ? 2 : entry.global.type === 'directory' ? 0 : 1;
  work.sort((a, b) =>
    rank(a) !== rank(b)
      ? rank(a) - rank(b)
      : rank(a) === 2
        ? b.name.localeCompare(a.name)
        : a.name.localeCompare(b.name),
  );
  const problems: PullProblem[] = [];
  const toScan: string[] = [];
  let pulled = 0;
  let last: { name: string; deleted: boolean; at: Date } | undefined;
  // Where each block this device has is, by hash: made once, when a file first needs a block.
  let blocksHere: Map<string, { name: string; offset: number; size: number }> | undefined;
  const here = () => {
    if (!blocksHere) {
      blocksHere = new Map();
      for (const record of db.iterate(folder.id)) {
        if (record.deleted || record.invalid || record.type !== 'file') continue;
        for (const block of record.blocks) {
          blocksHere.set(block.hash.toString('hex'), {
            name: record.name,
            offset: block.offset,
            size: block.size,
          });
        }
      }
    }
    return blocksHere;
  };
  // Pulled versions are written to the index in batches, and go to the other devices with them. A
  // crash between a rename and its batch leaves a file the next scan finds equal to the global version.
  const budget = new ByteBudget(BLOCK_BYTES_AT_ONCE);
  let done: Array<Omit<FileRecord, 'sequence'>> = [];
  const flush = () => {
    if (done.length === 0) return;
    options.recorded(db.update(folder.id, done));
    done = [];
  };
  const handle = async (brief: (typeof work)[number]) => {
    // With blocks, as the index has them now; a version changed meanwhile waits for the next pull.
    const full = fullRecords(db, folder.id, brief);
    if (!full) return;
    const item = { ...brief, ...full };
    const action = item.global.deleted ? 'delete' : 'update';
    const type = item.global.type === 'directory' ? 'dir' : item.global.type;
    options.events.log('ItemStarted', { folder: folder.id, item: item.name, type, action });
    let error: string | null = null;
    options.writes?.started(item.name);
    try {
      const copy = await pullOne(options, { fs, space, cases }, item, here, budget);
      if (copy) toScan.push(copy);
      done.push(withoutSequence(item.global));
      if (done.length >= RECORD_BATCH) flush();
      pulled += 1;
      logSynced(options.logger, { id: folder.id, described }, item.name, item.global);
      last = { name: item.name, deleted: item.global.deleted, at: new Date() };
      options.events.log('RemoteChangeDetected', {
        type,
        action: item.global.deleted ? 'deleted' : item.own && !item.own.deleted ? 'modified' : 'added',
        folder: folder.id,
        folderID: folder.id,
        path: item.name,
        label: folder.label ?? '',
        modifiedBy: shortIdString(item.global.modifiedBy),
      });
    } catch (caught) {
      error = (caught as Error).message;
      problems.push({ name: item.name, error });
      if (caught instanceof ScanFirstError) toScan.push(item.name);
    } finally {
      options.writes?.finished(item.name);
    }
    options.events.log('ItemFinished', { folder: folder.id, item: item.name, type, action, error });
  };
  // Directories one by one (a parent before its children), then files and symlinks several at once,
  // then deletions one by one (children before their parent).
  for (const phase of [0, 1, 2]) {
    const items = work.filter((item) => rank(item) === phase);
    if (phase === 1) inPullOrder(items, folder.order ?? 'random');
    const take = nextOf(items, phase === 1 ? folder.priority : undefined);
    const worker = async () => {
      for (let item = take(); item && !options.signal?.aborted; item = take()) await handle(item);
    };
    const parallel = phase === 1 ? FILES_AT_ONCE : 1;
    await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, worker));
    flush();
  }
  return { pulled, problems, toScan, last };
}

/** Takes the items one by one: those the priority names first, then the rest in their order. */
function nextOf<T extends { name: string }>(items: readonly T[], priority: PullPriority | undefined) {
  let next = 0;
  const started = new Set<string>();
  const waiting = priority ? new Map(items.map((item) => [item.name, item])) : undefined;
  // As Syncthing's BringToFront, which moves a queued file only: a name this pull does not need goes.
  priority?.keepOnly((name) => waiting?.has(name) === true);
  return (): T | undefined => {
    const first = priority?.take((name) => waiting?.has(name) === true && !started.has(name));
    if (first !== undefined) {
      started.add(first);
      return waiting?.get(first);
    }
    while (next < items.length) {
      const item = items[next++] as T;
      if (started.has(item.name)) continue;
      started.add(item.name);
      return item;
    }
    return undefined;
  };
}

/**
 * Puts files in the folder's pull order, as Syncthing orders its queue of files (folder_sendrecv.go,
 * after directories and before deletions). `items` comes sorted by name, which `alphabetic` keeps and
 * which settles the ties of the others.
 */
export function inPullOrder(items: NeededItem[], order: PullOrder): NeededItem[] {
  const older = (a: NeededItem, b: NeededItem) =>
    a.global.modifiedS - b.global.modifiedS || a.global.modifiedNs - b.global.modifiedNs;
  switch (order) {
    case 'random':
      for (let at = items.length - 1; at > 0; at--) {
        const other = Math.floor(Math.random() * (at + 1));
        [items[at], items[other]] = [items[other] as NeededItem, items[at] as NeededItem];
      }
      break;
    case 'alphabetic':
      break;
    case 'smallestFirst':
      items.sort((a, b) => a.global.size - b.global.size);
      break;
    case 'largestFirst':
      items.sort((a, b) => b.global.size - a.global.size);
      break;
    case 'oldestFirst':
      items.sort(older);
      break;
    case 'newestFirst':
      items.sort((a, b) => older(b, a));
      break;
  }
  return items;
}

type BlocksHere = () => Map<string, { name: string; offset: number; size: number }>;

async function pullOne(
  options: PullOptions,
  { fs, space, cases }: { fs: FolderFs; space: FreeSpace; cases: CaseNames },
  item: NeededItem,
  here: BlocksHere,
  budget: ByteBudget,
): Promise<string | undefined> {
  const { name, global } = item;
  const parent = parentOf(name);
  // Every step on the file happens in its directory, opened (and checked) once: a parent replaced
  // meanwhile is not followed.
  let dir: FolderDirectory | undefined;
  try {
    dir = fs.directoryOrNone(parent);
  } catch (error) {
    // Behind a symlink or a file nothing is deleted, and nothing is there to delete (Syncthing's
    // checkToBeDeleted); anything else is refused there.
    const behind = error instanceof TraversesSymlinkError || error instanceof NotADirectoryError;
    if (behind && global.deleted) return;
    throw error;
  }
  const held = { dir };
  try {
    return await pullIn(options, { fs, space, cases, held }, item, here, budget);
  } finally {
    held.dir?.close();
  }
}

// The pull of one item, in its directory: `held.dir`, made when it is missing and needed.
async function pullIn(
  options: PullOptions,
  {
    fs,
    space,
    cases,
    held,
  }: { fs: FolderFs; space: FreeSpace; cases: CaseNames; held: { dir: FolderDirectory | undefined } },
  item: NeededItem,
  here: BlocksHere,
  budget: ByteBudget,
): Promise<string | undefined> {
  const { folder } = options;
  const { name, global, own: local } = item;
  const base = baseOf(name);
  const onDisk = held.dir ? await held.dir.lstat(base) : undefined;
  // What is on disk must be what the index says of it: anything else is a change a scan has to see first.
  if (onDisk && (!local || local.deleted || !matches(onDisk, local))) {
    throw new ScanFirstError('changed on disk since it was last scanned; scheduling scan');
  }
  if (!onDisk && local && !local.deleted) {
    throw new ScanFirstError('gone from disk since it was last scanned; scheduling scan');
  }
  // A deletion where nothing is: done.
  if (global.deleted && !onDisk) return;
  const dir = (held.dir ??= fs.directory(parentOf(name), true));
  if (!onDisk && !global.deleted && !folder.caseSensitiveFS) {
    const real = await cases.clash(dir, base);
    if (real !== undefined) throw caseConflict(name, dir.name === '' ? real : `${dir.name}/${real}`);
  }
  // The same content already (a reset rebuilt the index, or both sides made the same change): only the
  // version is taken, and the file is left as it is.
  if (onDisk && local && equivalent(local, global, folder.ignorePerms)) {
    // Its time becomes the version's, so that the next scan finds it as the index says.
    if (global.type === 'file') await dir.lutimes(base, ...twice(global));
    return;
  }
  const conflict =
    onDisk !== undefined &&
    local !== undefined &&
    !local.deleted &&
    local.type === 'file' &&
    compareVersions(local.version, global.version).startsWith('concurrent');
  if (global.deleted) {
    // A change beats a deletion (Syncthing's conflict rule): a deletion that is global never meets one.
    if (onDisk?.isDirectory()) await deleteDirectory(options, fs, name, dir);
    else if (folder.versioner && onDisk?.isFile()) await archive(folder.versioner, name, 'delete file');
    else await dir.unlink(base);
    return;
  }
  if (global.type === 'directory') {
    if (onDisk && !onDisk.isDirectory()) throw new Error('a file is where the directory goes');
    if (!onDisk) await dir.mkdir(base);
    if (!folder.ignorePerms && !global.noPermissions) await dir.chmod(base, global.permissions & 0o777);
    return;
  }
  if (global.type === 'file') {
    // A file that cannot fit is not asked for (Syncthing's CheckAvailableSpace); the others go on.
    const problem = await space.problem(global.size);
    if (problem) throw new Error(problem);
  }
  const copy = conflict ? await keepConflict(folder, name, global.modifiedBy, fs) : undefined;
  if (!conflict && onDisk?.isDirectory()) throw new Error('a directory is where the file goes');
  const temporary = baseOf(temporaryName(name));
  if (global.type === 'symlink') {
    await dir.unlink(temporary).catch(ignoreMissing);
    await dir.symlink(global.symlinkTarget, temporary);
  } else {
    await buildFile(options, { fs, dir }, item, temporary, conflict ? undefined : base, here, budget);
  }
  // The last moment to find the file changed under the pull: then the new version waits (in its
  // temporary file, reused by the next try) rather than overwrite a change.
  const now = await dir.lstat(base);
  if (!conflict && onDisk && (!now || !sameStat(now, onDisk))) {
    throw new ScanFirstError('changed on disk while it was pulled; scheduling scan');
  }
  // Where nothing was (or the losing version was moved away), something new must not be overwritten.
  if ((conflict || !onDisk) && now) throw new Error('a new file appeared while it was pulled');
  // The version replaced goes to the folder's versions first (Syncthing's deleteItemOnDisk); if it
  // cannot, it stays, and so does the new one in its temporary file.
  if (!conflict && folder.versioner && onDisk?.isFile()) {
    await archive(folder.versioner, name, 'removing item to be replaced');
  }
  await dir.rename(temporary, base);
  if (global.type === 'symlink' && dir.readlinkSync(base) !== global.symlinkTarget) {
    throw new Error('the symlink changed while it was made');
  }
  return copy;
}

/**
 * Writes the file's blocks into `temporary`, a name in `dir` (from there, from the old version
 * `oldName` beside it, or from the devices), then gives it the version's permissions and time.
 */
async function buildFile(
  options: PullOptions,
  { fs, dir }: { fs: FolderFs; dir: FolderDirectory },
  item: NeededItem,
  temporary: string,
  oldName: string | undefined,
  here: BlocksHere,
  budget: ByteBudget,
): Promise<void> {
  const { global, own: local } = item;
  // A temporary file left by an interrupted pull holds blocks to reuse; a new one holds nothing. Made
  // new first, as it nearly always is: one call, where trying the left one first cost a failed open
  // and its error for every file.
  const created = await dir
    .open(temporary, 'wx+')
    .catch((error: NodeJS.ErrnoException) => (error.code === 'EEXIST' ? undefined : Promise.reject(error)));
  const left = created === undefined ? await dir.open(temporary, 'r+') : undefined;
  const fd = (created ?? left) as number;
  let resumed = false;
  let old: number | undefined;
  let failure: { error: unknown } | undefined;
  try {
    resumed = left !== undefined && (await sizeOfFd(left)) > 0;
    if (oldName && local && !local.deleted) old = await dir.open(oldName, 'r').catch(() => undefined);
    // A new file grows to its size with its blocks; one left by an interrupted pull may be longer.
    if (left !== undefined) await truncateFd(fd, global.size);
    const oldBlocks = new Map<string, { offset: number; size: number }>();
    for (const block of local?.blocks ?? []) oldBlocks.set(block.hash.toString('hex'), block);
    const sources = item.holders.filter((device) => device !== LOCAL);
    const tracker = options.progress?.track(options.folder.id, item.name, global.blocks.length, global.size);
    // Blocks found here are written one at a time per file: the kernel takes the file's lock for each,
    // and writes at once from several of libuv's threads spent their time spinning on it. (Received
    // blocks go to the writer, which keeps a file's blocks to one thread.)
    let writing: Promise<void> = Promise.resolve();
    const written = (data: Uint8Array, offset: number) =>
      (writing = writing.catch(() => {}).then(() => writeAt(fd, data, offset)));
    let next = 0;
    // Once a block fails, the others stop taking new blocks: the file cannot be finished.
    let failed = false;
    const work = async () => {
      try {
        for (let index = next++; index < global.blocks.length && !failed; index = next++) {
          if (options.signal?.aborted) throw new Error('the pull was stopped');
          const block = global.blocks[index] as FileRecord['blocks'][number];
          if (block.size === 0) continue;
          // However many files and blocks are under way, only so many bytes are held at once.
          await budget.take(block.size);
          try {
            // Already in the temporary file (an interrupted pull): nothing to write.
            if (resumed && (await readChecked(fd, block.offset, block.size, block.hash))) {
              tracker?.block('reused', block.size);
              continue;
            }
            const hex = block.hash.toString('hex');
            let source: BlockSource = 'copiedFromOrigin';
            let data = await fromOld(old, oldBlocks.get(hex), block.hash);
            if (!data) {
              source = 'copiedFromElsewhere';
              data = await fromElsewhere(fs, here().get(hex), block.hash);
            }
            if (data) {
              await written(data, block.offset);
            } else {
              source = 'pulled';
              await fromDevices(options, sources, item.name, block, index, fd);
            }
            tracker?.block(source, block.size);
          } finally {
            budget.give(block.size);
          }
        }
      } catch (error) {
        failed = true;
        throw error;
      }
    };
    try {
      // Every block's work ends before the file is closed, a failed one's included: a descriptor is a
      // number the next open may get, and a write still under way would land in that file.
      const ended = await Promise.allSettled(
        Array.from({ length: Math.min(IN_FLIGHT, global.blocks.length) }, work),
      );
      const rejected = ended.find((outcome) => outcome.status === 'rejected');
      if (rejected) throw rejected.reason;
    } finally {
      tracker?.done();
    }
    // Its permissions and time, on the file itself, as it is still open.
    const { folder } = options;
    if (!folder.ignorePerms && !global.noPermissions) await chmodFd(fd, global.permissions & 0o777);
    await timesFd(fd, ...twice(global));
    await syncFd(fd);
  } catch (error) {
    failure = { error };
  }
  // Both files closed whatever happened; the first error is the one told.
  const closed = await Promise.allSettled([closeFd(fd), ...(old === undefined ? [] : [closeFd(old)])]);
  if (failure) throw failure.error;
  const rejected = closed.find((outcome) => outcome.status === 'rejected');
  if (rejected) throw rejected.reason;
}

async function readChecked(
  fd: number,
  offset: number,
  size: number,
  hash: Buffer,
): Promise<Buffer | undefined> {
  const data = Buffer.alloc(size);
  if ((await readAt(fd, data, size, offset)) !== size) return undefined;
  return (await hasSha256(data, hash)) ? data : undefined;
}

async function fromOld(
  old: number | undefined,
  block: { offset: number; size: number } | undefined,
  hash: Buffer,
): Promise<Buffer | undefined> {
  if (old === undefined || !block) return undefined;
  return readChecked(old, block.offset, block.size, hash);
}

/** A block another file of the folder has (a renamed or copied file): read there, and checked. */
async function fromElsewhere(
  fs: FolderFs,
  where: { name: string; offset: number; size: number } | undefined,
  hash: Buffer,
): Promise<Buffer | undefined> {
  if (!where) return undefined;
  const fd = await fs.open(where.name, 'r').catch(() => undefined);
  if (fd === undefined) return undefined;
  try {
    return await readChecked(fd, where.offset, where.size, hash);
  } finally {
    await closeFd(fd);
  }
}

/**
 * Asks the devices that have the block for it until one sends what was asked for, which the writer
 * checks and writes at the block's place in `fd`.
 */
async function fromDevices(
  options: PullOptions,
  sources: string[],
  name: string,
  block: FileRecord['blocks'][number],
  index: number,
  fd: number,
): Promise<void> {
  const connected = options.connected();
  const available = sources.filter((device) => connected.has(device));
  if (available.length === 0) throw new Error('no device that has it is connected');
  let last = '';
  // Each device that has it is asked in turn, starting at a different one per block.
  for (let attempt = 0; attempt < available.length; attempt++) {
    const device = available[(index + attempt) % available.length] as string;
    try {
      const received = await options.request(device, {
        folder: options.folder.id,
        name,
        offset: BigInt(block.offset),
        size: block.size,
        hash: block.hash,
        blockNo: index,
        fromTemporary: false,
      });
      // A view of the received bytes, not a copy: what it keeps alive is about the block's own size
      // (the frame it came in, joined from the connection's chunks).
      const data = Buffer.from(received.buffer, received.byteOffset, received.byteLength);
      // The writer has the received message's memory from here, and gives it back when done.
      if (data.length === block.size && (await options.writer.write(fd, data, block.offset, block.hash))) {
        return;
      }
      last = `${device} sent a block that is not the one asked for`;
      options.logger.warn({ device, name, block: index }, `${last} (block ${index} of ${name})`);
    } catch (error) {
      last = (error as Error).message;
    }
  }
  throw new Error(`block ${index}: ${last}`);
}

// A file moved to the folder's versions, its failure named as Syncthing names it (folder_sendrecv.go).
async function archive(versioner: Versioner, name: string, doing: string): Promise<void> {
  try {
    await versioner.archive(name);
  } catch (error) {
    throw new Error(`${doing}: ${(error as Error).message}`, { cause: error });
  }
}

// Syncthing's words for a directory deleted elsewhere that cannot go here (folder_sendrecv.go).
const DIR_DELETED = 'delete dir: directory has been deleted on a remote device but';

/**
 * What is on disk is not what the index says (a change not scanned yet, Syncthing's errModified): the
 * name is scanned at once, and the pull tries it again after.
 */
class ScanFirstError extends Error {}

/**
 * Deletes the directory `name` in `parent`, as Syncthing's deleteDirOnDisk: only when nothing that
 * must stay is anywhere below it. Temporary files, and what a `(?d)` pattern ignores, go with it (a
 * deletable directory only once it is empty); an ignored entry keeps it (the user's, never deleted for
 * another device), and so does one the index does not know (scanned first) or one it knows (another
 * device ignores it, perhaps). Nothing is removed unless the directory can go.
 */
async function deleteDirectory(
  options: PullOptions,
  fs: FolderFs,
  name: string,
  parent: FolderDirectory,
): Promise<void> {
  const { ignores, id } = options.folder;
  const files: string[] = [];
  const directories: string[] = [];
  let unknown = false;
  let ignored = false;
  let known = false;
  // Every entry below, each read in its directory held open (never through a symlink).
  const visit = async (path: string): Promise<void> => {
    const dir = fs.directory(path);
    const below: string[] = [];
    try {
      for (const entry of await dir.readdir()) {
        const child = `${path}/${entry}`;
        const stats = await dir.lstat(entry);
        if (!stats) continue;
        if (ignores?.deletable(child) || (isTemporary(entry) && !stats.isDirectory())) {
          if (stats.isDirectory()) {
            directories.push(child);
            below.push(child);
          } else files.push(child);
        } else if (ignores?.ignored(child)) {
          ignored = true;
        } else {
          const record = options.db.file(id, child);
          // Not known, or not as the index knows it (a change not scanned yet): scanned first.
          if (!record || record.deleted || !matches(stats, record)) unknown = true;
          else known = true;
          if (stats.isDirectory()) below.push(child);
        }
      }
    } finally {
      dir.close();
    }
    for (const child of below) await visit(child);
  };
  await visit(name);
  if (unknown) throw new ScanFirstError(`${DIR_DELETED} contains changed files, scheduling scan`);
  if (ignored) {
    throw new Error(`${DIR_DELETED} contains ignored files (see ignore documentation for (?d) prefix)`);
  }
  if (known) {
    throw new Error(
      `${DIR_DELETED} is not empty; the contents are probably ignored on that remote device, but not locally`,
    );
  }
  for (const file of files) await fs.unlink(file).catch(ignoreMissing);
  // Deepest first; one that is not empty by now stays, and says why.
  for (const directory of directories.sort().reverse()) await fs.rmdir(directory);
  await parent.rmdir(baseOf(name));
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}

// Syncthing's FolderConfiguration.Description: the label quoted and the ID, or the ID alone.
function folderDescription(folder: PullOptions['folder']): string {
  return folder.label ? `${JSON.stringify(folder.label)} (${folder.id})` : folder.id;
}

function matches(stats: Stats, record: FileRecord): boolean {
  if (record.type === 'directory') return stats.isDirectory();
  if (record.type === 'symlink') return stats.isSymbolicLink();
  if (!stats.isFile() || stats.size !== record.size) return false;
  // Milliseconds are what a Stats holds; a change within the same millisecond and size is rare enough.
  return Math.abs(stats.mtimeMs - (record.modifiedS * 1000 + record.modifiedNs / 1e6)) < 1;
}

/** A version's modification time, as access and modification times for utimes. */
function twice(record: FileRecord): [number, number] {
  const seconds = record.modifiedS + record.modifiedNs / 1e9;
  return [seconds, seconds];
}

function sameStat(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}
