import { closeSync, readSync } from 'node:fs';
import { create } from '@bufbuild/protobuf';
import type { Configuration, FolderConfiguration } from '../../shared/config/defaults.ts';
import { ErrorCode, type Response, ResponseSchema } from '../bep/bep_pb.ts';
import { responseRoom } from '../bep/frames.ts';
import { closeFd, readAt } from '../files/fd.ts';
import { FolderFs, temporaryName } from '../files/folder-fs.ts';
import { nameProblem } from '../records/names.ts';
import type { MessageOf } from '../bep/messages.ts';
import { isInvalid } from '../records/file-record.ts';
import type { FileSummary, IndexDb } from '../index-db/index-db.ts';
import { adler32 } from '../checksums/adler32.ts';
import { hasSha256 } from '../checksums/sha256.ts';
import { MAX_BLOCK_SIZE } from '../records/blocks.ts';
import { SlowReads } from './slow-reads.ts';

/**
 * Answers other devices' requests for blocks of the folders shared with them, as Syncthing answers
 * them: only names this device has in its index as valid files (so nothing ignored, internal or
 * deleted), read from the disk (or from the temporary file of a pull under way, when asked), and
 * checked against the hash asked for, so that a file changed since it was scanned is never served as
 * what it was.
 */
export class BlockServer {
  readonly #db: IndexDb;
  readonly #config: () => Configuration;
  /** Bytes of blocks being read and sent, and the requests waiting for room. */
  #inFlight = 0;
  readonly #waiting: Array<() => void> = [];
  /** Each folder's files, for the configuration it was made from. */
  readonly #folderFs = new WeakMap<FolderConfiguration, FolderFs>();
  /** Files kept open, by folder and name, with the reads under way in each (a file is closed only after them). */
  readonly #handles = new Map<string, Kept>();
  /** Records looked up since this device's records last changed (their generation), by folder and name. */
  #records: { generation: number; byName: Map<string, FileSummary | undefined> } = {
    generation: -1,
    byName: new Map(),
  };

  /** When every block is read through libuv's threads instead (see #readNow). */
  readonly #slowReads: SlowReads;

  /** Asks for a file's rescan, its content read again whatever its size and time say. */
  readonly #recheck: (folder: string, name: string) => void;

  constructor(options: {
    db: IndexDb;
    config: () => Configuration;
    slowReads?: SlowReads;
    recheck?: (folder: string, name: string) => void;
  }) {
    this.#db = options.db;
    this.#config = options.config;
    this.#recheck = options.recheck ?? (() => {});
    this.#slowReads = options.slowReads ?? new SlowReads();
  }

  async answer(device: string, request: MessageOf<'Request'>): Promise<Response> {
    const reply = (code: ErrorCode, data?: Uint8Array) =>
      create(ResponseSchema, { id: request.id, code, data });
    const folder = this.#config().folders.find((entry) => entry.id === request.folder);
    if (!folder || folder.paused || !folder.devices.some((shared) => shared.deviceID === device)) {
      return reply(ErrorCode.GENERIC);
    }
    const offset = Number(request.offset);
    if (nameProblem(request.name) || offset < 0 || request.size < 0 || request.size > MAX_BLOCK_SIZE) {
      return reply(ErrorCode.GENERIC);
    }
    let fs = this.#folderFs.get(folder);
    if (!fs) this.#folderFs.set(folder, (fs = new FolderFs(folder.path, folder.markerName)));
    // The folder's own files are never served (Syncthing's model.Request: ErrInvalid).
    if (fs.isInternal(request.name)) return reply(ErrorCode.INVALID_FILE);
    const record = this.#record(folder.id, request.name);
    if (!record || record.deleted || record.type !== 'file') return reply(ErrorCode.NO_SUCH_FILE);
    if (isInvalid(record)) return reply(ErrorCode.INVALID_FILE);
    // Read through the folder's files: never through a symlinked parent, never a symlink itself.
    const names = [request.name];
    if (request.fromTemporary) names.unshift(temporaryName(request.name));
    // However many requests devices send at once, only so many bytes are read into memory at a time.
    await this.#room(request.size);
    try {
      // Read straight into the frame the answer goes out in.
      const room = responseRoom(request.id, request.size);
      for (const name of names) {
        const data = await this.#read(fs, name, offset, room);
        if (!data) continue;
        // Checked as Syncthing checks what it serves: the weak hash when one is asked, else SHA-256.
        const weakMatch = request.weakHash !== 0 && adler32(data) === request.weakHash;
        if (weakMatch || request.hash.length === 0 || (await hasSha256(data, request.hash))) {
          return reply(ErrorCode.NO_ERROR, data);
        }
        if (name === request.name) this.#recheckIfChanged(folder.id, request.name, offset, request.hash);
      }
      return reply(ErrorCode.NO_SUCH_FILE);
    } finally {
      this.#inFlight -= request.size;
      this.#waiting.shift()?.();
    }
  }

  /**
   * A block asked for as the index has it, but read otherwise from the disk: the file changed without
   * its size or time showing it, and is rescanned, so that the change reaches the other devices
   * (Syncthing's recheckFile). A request for another version of the block is no sign of that.
   */
  #recheckIfChanged(folder: string, name: string, offset: number, hash: Uint8Array): void {
    const record = this.#db.file(folder, name);
    const block = record?.blocks.find((candidate) => candidate.offset === offset);
    if (!record || record.deleted || isInvalid(record) || !block) return;
    if (!Buffer.from(hash).equals(block.hash)) return;
    this.#recheck(folder, name);
  }

  /**
   * The file's record in brief (a large file's thousands of blocks would be read for every block
   * served), looked up once for the blocks asked of it while this device's records are not written
   * to; the index updates of the device pulling them leave it.
   */
  #record(folder: string, name: string): FileSummary | undefined {
    const generation = this.#db.localGeneration;
    if (this.#records.generation !== generation) this.#records = { generation, byName: new Map() };
    const key = `${folder}\0${name}`;
    if (this.#records.byName.has(key)) return this.#records.byName.get(key);
    const record = this.#db.summary(folder, name);
    if (this.#records.byName.size >= MAX_OPEN) this.#records.byName.clear();
    this.#records.byName.set(key, record);
    return record;
  }

  /** `into`'s length in bytes at `offset`, read into it; undefined when the file is missing or shorter. */
  async #read(fs: FolderFs, name: string, offset: number, into: Buffer): Promise<Buffer | undefined> {
    if (into.length <= READ_NOW_MAX && !this.#slowReads.throughThreads(Date.now()))
      return this.#readNow(fs, name, offset, into);
    const kept = await this.#open(fs, name);
    if (!kept) return undefined;
    try {
      const bytesRead = await readAt(kept.fd, into, into.length, offset);
      return bytesRead === into.length ? into : undefined;
    } catch {
      return undefined;
    } finally {
      kept.reading -= 1;
      if (kept.forgotten && kept.reading === 0) void closeFd(kept.fd).catch(() => {});
    }
  }

  /**
   * A block read on this thread, at once: libuv's open, read and close cost about 150 µs of CPU time
   * for a small file's block (two round trips through its threads, and a close later), against 5 to
   * 10 here from the page cache (2,000 files of 4 KiB); a large file's blocks of 128 to 256 KiB are
   * copied from the cache in tens of µs, and serving 300 MiB took a third less of the worker's CPU
   * time so. Reads that make this thread wait (a disk, not the cache) send blocks through libuv's
   * threads for a while, so that a slow disk never holds up the event loop for long.
   */
  #readNow(fs: FolderFs, name: string, offset: number, into: Buffer): Buffer | undefined {
    const started = performance.now();
    let fd: number;
    try {
      fd = fs.openSync(name, 'r');
    } catch {
      return undefined;
    }
    try {
      return readSync(fd, into, 0, into.length, offset) === into.length ? into : undefined;
    } catch {
      return undefined;
    } finally {
      try {
        closeSync(fd);
      } catch {
        // Closed all the same.
      }
      this.#slowReads.record(performance.now() - started, Date.now());
    }
  }

  /** The file kept open, counted as read from until the caller's read is done. */
  async #open(fs: FolderFs, name: string): Promise<Kept | undefined> {
    const path = `${fs.root}\0${name}`;
    const kept = this.#handles.get(path);
    if (kept) {
      kept.timer.refresh();
      kept.reading += 1;
      return kept;
    }
    const fd = await fs.open(name, 'r').catch(() => undefined);
    if (fd === undefined) return undefined;
    const already = this.#handles.get(path);
    if (already) {
      already.reading += 1;
      void closeFd(fd).catch(() => {});
      return already;
    }
    if (this.#handles.size >= MAX_OPEN) this.#forget(this.#handles.keys().next().value as string);
    const timer = setTimeout(() => this.#forget(path), KEEP_OPEN_MS);
    timer.unref();
    const opened = { fd, timer, reading: 1, forgotten: false };
    this.#handles.set(path, opened);
    return opened;
  }

  #forget(path: string): void {
    const kept = this.#handles.get(path);
    if (!kept) return;
    this.#handles.delete(path);
    clearTimeout(kept.timer);
    kept.forgotten = true;
    // Reads under way finish first: the last one closes it (its descriptor must not be reused under them).
    if (kept.reading === 0) void closeFd(kept.fd).catch(() => {});
  }

  /** Closes the files kept open. */
  close(): void {
    for (const path of [...this.#handles.keys()]) this.#forget(path);
  }

  async #room(size: number): Promise<void> {
    // options.maxConcurrentIncomingRequestKiB, 0 meaning Syncthing's default of 256 MiB.
    const setting = this.#config().options.maxConcurrentIncomingRequestKiB;
    const limit = (setting > 0 ? setting : 256 * 1024) * 1024;
    while (this.#inFlight > 0 && this.#inFlight + size > limit) {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
    this.#inFlight += size;
  }
}

interface Kept {
  fd: number;
  timer: NodeJS.Timeout;
  reading: number;
  forgotten: boolean;
}

// Blocks up to this size are read at once (see #readNow): those of files up to 1 GiB or so (Syncthing
// sizes blocks for about 2,000 per file), read from the cache in a fraction of a millisecond.
const READ_NOW_MAX = 1024 * 1024;
// A file asked for block after block is opened once: its handle is kept this long after its last use.
const KEEP_OPEN_MS = 2000;
const MAX_OPEN = 32;
