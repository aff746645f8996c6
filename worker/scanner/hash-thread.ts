// A hashing thread: the worker's event loop never reads or hashes file contents itself, so that its
// HTTP answers and IPC heartbeats do not wait for a scan.
import { parentPort } from 'node:worker_threads';
import { type HashRange, hashRange } from './blocks.ts';

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
