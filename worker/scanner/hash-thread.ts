// A hashing thread: the worker's event loop never reads or hashes file contents itself, so that its
// HTTP answers and IPC heartbeats do not wait for a scan.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { type HashRange, hashRange } from './blocks.ts';

/** The niceness a hashing thread takes, above the worker's own thread (0 by default). */
export const HASHING_NICENESS = 10;

// Hashing threads yield to the worker's own thread. There are as many of them as cores, and that
// thread answers HTTP and heartbeats besides walking the tree and recording what they hash: sharing
// cores evenly with them, its pings waited up to 150 to 190 ms during a scan, 30 to 80 ms once they
// yield (BENCHMARKS.md). Linux only (a thread's own id is read from /proc); elsewhere, or where it is
// refused, threads keep the default.
// Only as a thread: a module that imports this one for its types or constant is left as it is.
if (parentPort) {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, HASHING_NICENESS);
  } catch {
    // Not Linux, or not allowed: the default priority.
  }
}

export interface HashJob extends HashRange {
  id: number;
  path: string;
}

export type HashResult =
  | { id: number; blocks: Array<{ offset: number; size: number; hash: Uint8Array; weakHash: number }> }
  | { id: number; error: string; code?: string };

// Jobs come in batches and their results go back in one message: a message per small file would
// cost more than hashing it.
parentPort?.on('message', (jobs: HashJob[]) => {
  const results = jobs.map((job): HashResult => {
    try {
      // Each hash in a buffer of its own: a digest is a view of a shared 8 KiB pool, which would be
      // copied whole with every hash that goes back.
      const blocks = hashRange(job.path, job).map((block) => ({
        ...block,
        hash: new Uint8Array(block.hash),
      }));
      return { id: job.id, blocks };
    } catch (error) {
      const { message, code } = error as NodeJS.ErrnoException;
      return { id: job.id, error: message, code };
    }
  });
  parentPort?.postMessage(results);
});
