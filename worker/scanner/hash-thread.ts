// A hashing thread: the worker's event loop never reads or hashes file contents itself, so that its
// HTTP answers and IPC heartbeats do not wait for a scan. Threads of the same module check and write
// the blocks a pull receives (see worker/sync/block-writer.ts).
import { createHash } from 'node:crypto';
import { readlinkSync, writeSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { type HashRange, hashRange } from './hash-file.ts';

/**
 * How much nicer a hashing thread is than the worker's own thread (0 by default, 11 with
 * options.setLowPriority; at most 19).
 */
export const HASHING_NICENESS = 10;

// Hashing threads yield to the worker's own thread. There are as many of them as cores, and that
// thread answers HTTP and heartbeats besides walking the tree and recording what they hash: sharing
// cores evenly with them, its pings waited up to 150 to 190 ms during a scan, 30 to 80 ms once they
// yield (docs/perf-notes/2026-11-21-to-26.md). Linux only (a thread's own id is read from /proc); elsewhere, or where it is
// refused, threads keep the default. A thread starts with the niceness of the thread that made it.
// Only as a thread: a module that imports this one for its types or constant is left as it is. A
// pull's thread keeps the default: it is part of the pull, as libuv's threads are.
if (parentPort && (workerData as ThreadRole | undefined)?.role !== 'pull') {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, Math.min(19, getPriority(tid) + HASHING_NICENESS));
  } catch {
    // Not Linux, or not allowed: the default priority.
  }
}

/** What a thread is for: a scan's (the default, yielding to the worker's thread) or a pull's. */
export interface ThreadRole {
  role: 'scan' | 'pull';
}

export interface HashJob extends HashRange {
  id: number;
  path: string;
}

export type HashResult =
  | { id: number; blocks: Array<{ offset: number; size: number; hash: Uint8Array; weakHash: number }> }
  | { id: number; error: string; code?: string };

/**
 * A received block to write at `offset` of the descriptor `fd` if its SHA-256 is `hash`: `length`
 * bytes at `at` of `memory`, the received message's, moved here (transferred, not copied) and sent
 * back with the result.
 */
export interface WriteJob {
  id: number;
  fd: number;
  offset: number;
  memory: ArrayBuffer;
  at: number;
  length: number;
  hash: Uint8Array;
}

/** `written` false: the block is not the one asked for, and nothing was written. */
export type WriteResult = { id: number; memory: ArrayBuffer } & (
  | { written: boolean }
  | { error: string; code?: string }
);

export type ThreadMessage = { kind: 'hash'; jobs: HashJob[] } | { kind: 'write'; jobs: WriteJob[] };

// Jobs come in batches and their results go back in one message: a message per small file would
// cost more than hashing it.
parentPort?.on('message', (message: ThreadMessage) => {
  if (message.kind === 'hash') {
    parentPort?.postMessage(message.jobs.map(hashJob));
    return;
  }
  const results = message.jobs.map(writeJob);
  // Each block's memory goes back with its result, moved as it came.
  parentPort?.postMessage(
    results,
    results.map((result) => result.memory),
  );
});

function writeJob(job: WriteJob): WriteResult {
  const { id, memory } = job;
  try {
    const data = new Uint8Array(memory, job.at, job.length);
    if (!createHash('sha256').update(data).digest().equals(job.hash)) return { id, memory, written: false };
    for (let done = 0; done < data.length;) {
      done += writeSync(job.fd, data, done, data.length - done, job.offset + done);
    }
    return { id, memory, written: true };
  } catch (error) {
    return { memory, ...failed(id, error) };
  }
}

function hashJob(job: HashJob): HashResult {
  try {
    // Each hash in a buffer of its own: a digest is a view of a shared 8 KiB pool, which would be
    // copied whole with every hash that goes back.
    const blocks = hashRange(job.path, job).map((block) => ({
      ...block,
      hash: new Uint8Array(block.hash),
    }));
    return { id: job.id, blocks };
  } catch (error) {
    return failed(job.id, error);
  }
}

function failed(id: number, error: unknown): { id: number; error: string; code?: string } {
  const { message, code } = error as NodeJS.ErrnoException;
  return { id, error: message, code };
}
