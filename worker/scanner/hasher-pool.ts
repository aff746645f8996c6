import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { distDir, packageRoot } from '../../shared/paths.ts';
import type { Block } from '../records/blocks.ts';
import { hashFile } from './hash-file.ts';
import type { HashJob, HashResult, ThreadMessage, ThreadRole } from './hash-thread.ts';

// The thread's module: the bundle once built; the source, through tsx, when this runs from sources.
const fromSources = import.meta.url.endsWith('.ts');
const threadEntry = fromSources
  ? join(packageRoot, 'worker', 'scanner', 'hash-thread.ts')
  : join(distDir, 'worker', 'scanner', 'hash-thread.cjs');
// A thread does not get tsx's loader from --import: from sources it registers it, then loads the module.
const sourceBootstrap = () => {
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = pathToFileURL(threadEntry).href;
  return `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
};

/** A hashing thread (hash-thread.ts) for `role`, from the bundle or from the sources. */
export function startHashThread(role: ThreadRole['role']): Worker {
  const workerData: ThreadRole = { role };
  const thread = fromSources
    ? new Worker(sourceBootstrap(), { eval: true, stdout: false, stderr: false, workerData })
    : new Worker(threadEntry, { stdout: false, stderr: false, workerData });
  thread.unref();
  return thread;
}

/** A file that could not be hashed: `code` is the system's (ENOENT, EACCES) or ECHANGED. */
export class HashError extends Error {
  readonly code: string | undefined;
  constructor(message: string, code: string | undefined) {
    super(message);
    this.name = 'HashError';
    this.code = code;
  }
}

interface Pending {
  job: HashJob;
  resolve: (blocks: Block[]) => void;
  reject: (error: Error) => void;
}

// A hashing thread left without work this long ends; the next scan starts it again.
const IDLE_THREAD_MS = 30_000;

// A file larger than this is hashed in ranges of this size, by all threads at once.
const RANGE_BYTES = 8 * 1024 * 1024;

// What a thread is given and has not answered yet, at most, in bytes to read: enough that it never
// sits idle waiting for its next file (about 40 ms of work, more than the worker's thread is ever busy
// writing a batch of records), little enough that the work stays shared between threads. A
// message carries up to a batch of small files, so that they do not cost a message each.
const QUEUED_BYTES_PER_THREAD = 16 * 1024 * 1024;
const BATCH_BYTES = 1024 * 1024;
const BATCH_JOBS = 64;

/**
 * Threads that read and hash files, as many threads as cores: every core hashes while the worker's own
 * thread stays free. Each thread is given several files at once and hashes them one after the other.
 * Threads start on the first job and end with `close`; a thread that dies is replaced, and its files
 * reported as failed.
 */
export class HasherPool {
  readonly #size: number;
  readonly #threads = new Map<Worker, Assigned>();
  readonly #queue: Pending[] = [];
  #nextId = 1;
  #closed = false;
  #scheduled = false;
  readonly #idleTimers = new Map<Worker, NodeJS.Timeout>();

  constructor(size = availableParallelism()) {
    this.#size = Math.max(1, size);
  }

  /**
   * The blocks of a file of `size` bytes. A large file is cut into ranges that several threads hash at
   * once; an empty file is one empty block. With `root`, the folder `path` lies in, the file is opened
   * through the folder's files (never through a symlinked parent, never a symlink).
   */
  async hash(path: string, size: number, blockSize: number, root?: string): Promise<Block[]> {
    if (size === 0) return hashFile(path, 0, blockSize);
    const step = Math.max(blockSize, Math.floor(RANGE_BYTES / blockSize) * blockSize);
    const ranges: Array<Promise<Block[]>> = [];
    for (let start = 0; start < size; start += step) {
      ranges.push(
        this.#range({ path, start, length: Math.min(step, size - start), blockSize, fileSize: size, root }),
      );
    }
    return (await Promise.all(ranges)).flat();
  }

  /** Starts every thread now, so that the first scan does not wait for them. */
  warm(): void {
    while (!this.#closed && this.#threads.size < this.#size) this.#start();
  }

  #range(range: Omit<HashJob, 'id'>): Promise<Block[]> {
    if (this.#closed) return Promise.reject(new Error('the hasher is closed'));
    return new Promise((resolve, reject) => {
      this.#queue.push({ job: { ...range, id: this.#nextId++ }, resolve, reject });
      this.#schedule();
    });
  }

  // Jobs asked for in one turn of the event loop go out together.
  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#next();
    });
  }

  /** Ends every thread; jobs not yet done fail. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#idleTimers.values()) clearTimeout(timer);
    this.#idleTimers.clear();
    const closed = new Error('the hasher closed');
    for (const pending of this.#queue.splice(0)) pending.reject(closed);
    const threads = [...this.#threads.keys()];
    for (const { jobs } of this.#threads.values())
      for (const pending of jobs.values()) pending.reject(closed);
    this.#threads.clear();
    await Promise.all(threads.map((thread) => thread.terminate()));
  }

  #next(): void {
    while (this.#queue.length > 0 && !this.#closed) {
      const thread = this.#leastBusy();
      if (!thread) return;
      const assigned = this.#threads.get(thread) as Assigned;
      let room = QUEUED_BYTES_PER_THREAD - assigned.bytes;
      const batch: Pending[] = [];
      let batchBytes = 0;
      // At least one job however large; then more while they fit the batch and the thread's room.
      while (this.#queue.length > 0 && batch.length < BATCH_JOBS) {
        const size = (this.#queue[0] as Pending).job.length;
        if (batch.length > 0 && (batchBytes + size > BATCH_BYTES || size > room)) break;
        batch.push(this.#queue.shift() as Pending);
        batchBytes += size;
        room -= size;
      }
      for (const pending of batch) assigned.jobs.set(pending.job.id, pending);
      assigned.bytes += batchBytes;
      const message: ThreadMessage = { kind: 'hash', jobs: batch.map((pending) => pending.job) };
      thread.postMessage(message);
    }
  }

  // The thread with the least to read, a new one while there are fewer than cores; none when every
  // thread has its fill.
  #leastBusy(): Worker | undefined {
    let best: Worker | undefined;
    let least = QUEUED_BYTES_PER_THREAD;
    for (const [thread, { jobs, bytes }] of this.#threads) {
      if (bytes < least || (jobs.size === 0 && best === undefined)) {
        best = thread;
        least = bytes;
      }
    }
    if ((best === undefined || least > 0) && this.#threads.size < this.#size) return this.#start();
    return best;
  }

  // A thread with nothing to do for a while ends: an idle service holds no hashing threads.
  #idleTimer(thread: Worker, jobs: Map<number, Pending>): void {
    if (jobs.size > 0) return;
    const timers = this.#idleTimers;
    clearTimeout(timers.get(thread));
    const timer = setTimeout(() => {
      timers.delete(thread);
      if (jobs.size > 0 || !this.#threads.delete(thread)) return;
      void thread.terminate();
    }, IDLE_THREAD_MS);
    timer.unref();
    timers.set(thread, timer);
  }

  #start(): Worker {
    const thread = startHashThread('scan');
    const assigned: Assigned = { jobs: new Map(), bytes: 0 };
    const { jobs } = assigned;
    this.#threads.set(thread, assigned);
    thread.on('message', (results: HashResult[]) => {
      const answered: Array<[Pending, HashResult]> = [];
      for (const result of results) {
        const pending = jobs.get(result.id);
        if (!pending) continue;
        jobs.delete(result.id);
        assigned.bytes -= pending.job.length;
        answered.push([pending, result]);
      }
      // The thread gets its next work before anything waits on these results: what they start on this
      // thread (recording files) must not leave the hashing threads idle meanwhile.
      if (!this.#closed) this.#next();
      for (const [pending, result] of answered) {
        if ('error' in result) pending.reject(new HashError(result.error, result.code));
        else
          pending.resolve(
            result.blocks.map((block) => ({
              ...block,
              hash: Buffer.from(block.hash.buffer, block.hash.byteOffset, block.hash.byteLength),
            })),
          );
      }
      this.#idleTimer(thread, jobs);
    });
    const lost = (error: Error) => {
      if (!this.#threads.delete(thread)) return;
      for (const pending of jobs.values()) {
        pending.reject(new HashError(`the hashing thread failed: ${error.message}`, 'ETHREAD'));
      }
      jobs.clear();
      assigned.bytes = 0;
      if (!this.#closed) this.#next();
    };
    thread.on('error', lost);
    this.#idleTimer(thread, jobs);
    thread.on('exit', (code) => lost(new Error(`it exited with code ${code}`)));
    return thread;
  }
}

/** What a thread was given and has not answered yet. */
interface Assigned {
  jobs: Map<number, Pending>;
  /** The bytes those jobs read. */
  bytes: number;
}
