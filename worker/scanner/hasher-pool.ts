import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { distDir, packageRoot } from '../../shared/paths.ts';
import type { Block } from './blocks.ts';
import type { HashJob, HashResult } from './hash-thread.ts';

// The thread's module: the bundle once built; the source, through tsx, when this runs from sources.
const fromSources = import.meta.url.endsWith('.ts');
const threadEntry = fromSources
  ? join(packageRoot, 'worker', 'scanner', 'hash-thread.ts')
  : join(distDir, 'worker', 'scanner', 'hash-thread.js');
// A thread does not get tsx's loader from --import: from sources it registers it, then loads the module.
const sourceBootstrap = () => {
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = pathToFileURL(threadEntry).href;
  return `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
};

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

/**
 * Threads that read and hash files, one file per thread at a time, as many threads as cores: every
 * core hashes while the worker's own thread stays free. Threads start on the first job and end with
 * `close`; a thread that dies is replaced, and its file reported as failed.
 */
export class HasherPool {
  readonly #size: number;
  readonly #idle: Worker[] = [];
  readonly #busy = new Map<Worker, Pending>();
  readonly #queue: Pending[] = [];
  #threads = 0;
  #nextId = 1;
  #closed = false;

  constructor(size = availableParallelism()) {
    this.#size = Math.max(1, size);
  }

  hash(path: string, size: number, blockSize: number): Promise<Block[]> {
    if (this.#closed) return Promise.reject(new Error('the hasher is closed'));
    return new Promise((resolve, reject) => {
      this.#queue.push({ job: { id: this.#nextId++, path, size, blockSize }, resolve, reject });
      this.#next();
    });
  }

  /** Ends every thread; jobs not yet done fail. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const pending of this.#queue.splice(0)) pending.reject(new Error('the hasher closed'));
    const threads = [...this.#idle.splice(0), ...this.#busy.keys()];
    for (const [, pending] of this.#busy) pending.reject(new Error('the hasher closed'));
    this.#busy.clear();
    await Promise.all(threads.map((thread) => thread.terminate()));
  }

  #next(): void {
    while (this.#queue.length > 0) {
      const thread = this.#idle.pop() ?? this.#start();
      if (!thread) return;
      const pending = this.#queue.shift() as Pending;
      this.#busy.set(thread, pending);
      thread.postMessage(pending.job);
    }
  }

  #start(): Worker | undefined {
    if (this.#threads >= this.#size) return undefined;
    this.#threads += 1;
    const thread = fromSources
      ? new Worker(sourceBootstrap(), { eval: true, stdout: false, stderr: false })
      : new Worker(threadEntry, { stdout: false, stderr: false });
    thread.unref();
    thread.on('message', (result: HashResult) => {
      const pending = this.#busy.get(thread);
      if (!pending || pending.job.id !== result.id) return;
      this.#busy.delete(thread);
      if ('error' in result) pending.reject(new HashError(result.error, result.code));
      else {
        pending.resolve(result.blocks.map((block) => ({ ...block, hash: Buffer.from(block.hash) })));
      }
      if (this.#closed) return;
      this.#idle.push(thread);
      this.#next();
    });
    const lost = (error: Error) => {
      this.#threads -= 1;
      const index = this.#idle.indexOf(thread);
      if (index >= 0) this.#idle.splice(index, 1);
      const pending = this.#busy.get(thread);
      this.#busy.delete(thread);
      pending?.reject(new HashError(`the hashing thread failed: ${error.message}`, 'ETHREAD'));
      if (!this.#closed) this.#next();
    };
    thread.on('error', lost);
    thread.on('exit', (code) => {
      if (!this.#closed) lost(new Error(`it exited with code ${code}`));
    });
    return thread;
  }
}
