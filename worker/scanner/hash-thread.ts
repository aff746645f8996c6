// A hashing thread: the worker's event loop never reads or hashes file contents itself, so that its
// HTTP answers and IPC heartbeats do not wait for a scan.
import { parentPort } from 'node:worker_threads';
import { hashFile } from './blocks.ts';

export interface HashJob {
  id: number;
  path: string;
  size: number;
  blockSize: number;
}

export type HashResult =
  | { id: number; blocks: Array<{ offset: number; size: number; hash: Uint8Array; weakHash: number }> }
  | { id: number; error: string; code?: string };

parentPort?.on('message', (job: HashJob) => {
  hashFile(job.path, job.size, job.blockSize).then(
    (blocks) => parentPort?.postMessage({ id: job.id, blocks } satisfies HashResult),
    (error: NodeJS.ErrnoException) =>
      parentPort?.postMessage({ id: job.id, error: error.message, code: error.code } satisfies HashResult),
  );
});
