import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { cameBack, movable } from '../bep/frames.ts';
import { writeAt } from '../files/fd.ts';
import { hasSha256 } from '../checksums/sha256.ts';
import type { ThreadMessage, WriteJob, WriteResult } from '../scanner/hash-thread.ts';
import { startHashThread } from '../scanner/hasher-pool.ts';

// A thread left without blocks this long ends; the next pull starts it again.
const IDLE_THREAD_MS = 30_000;

interface Pending {
  resolve: (written: boolean) => void;
  reject: (error: Error) => void;
}

interface Slot {
  thread: Worker;
  jobs: Map<number, Pending>;
  /** Jobs of this turn of the event loop, sent together at its end. */
  queued: WriteJob[];
  idle?: NodeJS.Timeout;
}

/**
 * Checks the blocks a pull receives against their SHA-256 and writes them into the files being built,
 * on hashing threads of its own (hash-thread.ts). A received block's message lies in a buffer of its
 * own (frames.ts): that memory moves to the thread and back (transferred, never copied, never shared:
 * memory shared with a thread stays alive until that thread's garbage collector lets it go, which
 * could be never, and a pull of 4 GiB grew the worker past 512 MB that way). The worker's thread only
 * sends a message, where hashing through WebCrypto and writing through libuv cost it about twice as
 * much (a copy of the block, then wiping that copy, and a round trip per call). Blocks of one file go
 * to one thread, so that its writes do not wait on each other for the file's lock. Threads start on
 * the first block and end once idle; a thread that dies fails its blocks and is replaced by the next.
 */
export class BlockWriter {
  readonly #slots: Array<Slot | undefined>;
  #nextId = 1;
  #closed = false;

  constructor(threads = Math.min(2, availableParallelism())) {
    this.#slots = new Array(Math.max(1, threads)).fill(undefined);
  }

  /**
   * Writes all of `data` at `offset` of `fd` if its SHA-256 is `hash`; false, with nothing written, if
   * it is not. `data` must not change, and `fd` must stay open, until this has settled. A received
   * message's memory (see `movable`) is moved to a thread: empty here from then on, it is given back
   * for the next message when the thread is done with it.
   */
  async write(fd: number, data: Uint8Array, offset: number, hash: Uint8Array): Promise<boolean> {
    if (this.#closed) throw new Error('the block writer is closed');
    // Other bytes (a small block, in a buffer of Node's pool, with others) are checked and written here.
    if (!movable(data)) {
      if (!(await hasSha256(data, hash))) return false;
      await writeAt(fd, data, offset);
      return true;
    }
    const slot = this.#slot(fd);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      slot.jobs.set(id, { resolve, reject });
      const memory = data.buffer as ArrayBuffer;
      // The hash alone, not the pool of Node's buffers it may lie in (a view is sent with all its memory).
      const job = {
        id,
        fd,
        offset,
        memory,
        at: data.byteOffset,
        length: data.length,
        hash: new Uint8Array(hash),
      };
      if (slot.queued.push(job) === 1) {
        process.nextTick(() => this.#send(slot));
      }
    });
  }

  /**
   * Ends every thread; blocks not yet written fail, once their thread has ended: until then it may
   * still be writing, and a pull closes its file only when every block has settled.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const slots = this.#slots.filter((slot) => slot !== undefined);
    this.#slots.fill(undefined);
    await Promise.all(slots.map((slot) => slot.thread.terminate()));
    for (const slot of slots) this.#fail(slot, new Error('the block writer closed'));
  }

  #send(slot: Slot): void {
    if (slot.queued.length === 0 || this.#slots.indexOf(slot) < 0) return;
    const message: ThreadMessage = { kind: 'write', jobs: slot.queued.splice(0) };
    clearTimeout(slot.idle);
    slot.thread.postMessage(
      message,
      message.jobs.map((job) => job.memory),
    );
  }

  #slot(fd: number): Slot {
    const at = fd % this.#slots.length;
    const existing = this.#slots[at];
    if (existing) return existing;
    const thread = startHashThread('pull');
    const slot: Slot = { thread, jobs: new Map(), queued: [] };
    this.#slots[at] = slot;
    thread.on('message', (results: WriteResult[]) => {
      for (const result of results) {
        cameBack(result.memory);
        const pending = slot.jobs.get(result.id);
        if (!pending) continue;
        slot.jobs.delete(result.id);
        if ('error' in result) pending.reject(Object.assign(new Error(result.error), { code: result.code }));
        else pending.resolve(result.written);
      }
      if (slot.jobs.size === 0) this.#idle(slot);
    });
    const lost = (error: Error) => {
      if (this.#slots[at] !== slot) return;
      this.#slots[at] = undefined;
      this.#fail(slot, new Error(`the block writing thread failed: ${error.message}`));
    };
    thread.on('error', lost);
    thread.on('exit', (code) => lost(new Error(`it exited with code ${code}`)));
    return slot;
  }

  // A thread with nothing to do for a while ends: an idle service holds no writing threads.
  #idle(slot: Slot): void {
    clearTimeout(slot.idle);
    slot.idle = setTimeout(() => {
      const at = this.#slots.indexOf(slot);
      if (at < 0 || slot.jobs.size > 0) return;
      this.#slots[at] = undefined;
      void slot.thread.terminate();
    }, IDLE_THREAD_MS);
    slot.idle.unref();
  }

  #fail(slot: Slot, error: Error): void {
    clearTimeout(slot.idle);
    slot.queued.length = 0;
    for (const pending of slot.jobs.values()) pending.reject(error);
    slot.jobs.clear();
  }
}
