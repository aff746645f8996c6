import { createHash, webcrypto } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { relative } from 'node:path';
import { FolderFs } from '../files/folder-fs.ts';
import { adler32Of, blockBuffer } from './adler32.ts';

/** A block of a file as Syncthing indexes it: where it is, how long, its SHA-256 and Adler-32. */
export interface Block {
  offset: number;
  size: number;
  hash: Buffer;
  weakHash: number;
}

export { adler32 } from './adler32.ts';

export const MIN_BLOCK_SIZE = 128 * 1024;
export const MAX_BLOCK_SIZE = 16 * 1024 * 1024;
// Syncthing's DesiredPerFileBlocks: a file gets fewer blocks than this, as long as blocks may grow.
const DESIRED_BLOCKS = 2000;

/**
 * Syncthing's block size for a file of `size` bytes: the smallest power of two from 128 KiB to 16 MiB
 * that gives fewer than 2,000 blocks. A file indexed before with `previous` keeps it while the new size
 * is within a factor of two of it, so that a file growing across a boundary is not rehashed whole.
 */
export function blockSizeFor(size: number, previous?: number): number {
  let chosen = MIN_BLOCK_SIZE;
  while (chosen < MAX_BLOCK_SIZE && size >= DESIRED_BLOCKS * chosen) chosen *= 2;
  if (previous !== undefined && previous >= MIN_BLOCK_SIZE && previous <= MAX_BLOCK_SIZE) {
    const ratio = chosen > previous ? chosen / previous : previous / chosen;
    if (ratio <= 2) return previous;
  }
  return chosen;
}

/** SHA-256 of nothing: the hash of the one empty block an empty file has. */
const EMPTY_HASH = createHash('sha256').digest();

/**
 * Reads a file and cuts it into blocks of `blockSize`, hashing each. An empty file is one empty block,
 * as Syncthing indexes it. Throws what reading throws (a file gone, unreadable); a file that changed
 * size while read is an error too (ECHANGED), since its blocks would describe neither version.
 */
export function hashFile(path: string, expectedSize: number, blockSize: number): Block[] {
  if (expectedSize === 0) return [{ offset: 0, size: 0, hash: EMPTY_HASH, weakHash: 1 }];
  return hashRange(path, { start: 0, length: expectedSize, blockSize, fileSize: expectedSize });
}

export interface HashRange {
  /** Where the range starts: a multiple of `blockSize`. */
  start: number;
  length: number;
  blockSize: number;
  /** The whole file's size: the range that ends there also checks that nothing follows. */
  fileSize: number;
  /** The folder `path` is in: then it is opened through the folder's files (see folder-fs.ts). */
  root?: string;
}

/**
 * The blocks of one range of a file, so that a large file is hashed by several threads at once.
 * Synchronous reads: this runs in a hashing thread of its own, where waiting blocks nobody and a
 * promise per block only costs.
 */
export function hashRange(path: string, range: HashRange): Block[] {
  const { start, length, blockSize, fileSize } = range;
  const { root } = range;
  const fd = root ? new FolderFs(root).openSync(relative(root, path), 'r') : openSync(path, 'r');
  try {
    // Read straight into the Adler-32 module's memory: hashed there by both sums without a copy.
    const buffer = blockBuffer(blockSize);
    const blocks: Block[] = [];
    let offset = start;
    const end = start + length;
    while (offset < end) {
      const want = Math.min(blockSize, end - offset);
      let filled = 0;
      while (filled < want) {
        const bytesRead = readSync(fd, buffer, filled, want - filled, offset + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      if (filled < want) throw changedSize(fileSize, offset + filled);
      blocks.push({
        offset,
        size: filled,
        hash: createHash('sha256').update(buffer.subarray(0, filled)).digest(),
        weakHash: adler32Of(filled),
      });
      offset += filled;
    }
    // The last range: anything beyond the size the scan saw means the file grew meanwhile.
    if (end === fileSize && readSync(fd, buffer, 0, 1, end) > 0) throw changedSize(fileSize, end + 1);
    return blocks;
  } finally {
    closeSync(fd);
  }
}

function changedSize(expected: number, found: number): Error {
  const more = found > expected ? ' or more' : '';
  return Object.assign(new Error(`changed size while being read (${expected} → ${found}${more} bytes)`), {
    code: 'ECHANGED',
  });
}

// From this size, a block's SHA-256 is computed on libuv's threads (WebCrypto), off the event loop:
// about a third of the event loop's time per block of 128 KiB, the copy it makes included. A small
// block is hashed in place, quicker than the round trip.
const HASH_ELSEWHERE = 32 * 1024;

/** Whether `data` has the SHA-256 `hash`; `data` must not change until this has settled. */
export async function hasSha256(data: Uint8Array, hash: Uint8Array): Promise<boolean> {
  if (data.length < HASH_ELSEWHERE) return createHash('sha256').update(data).digest().equals(hash);
  return Buffer.from(await webcrypto.subtle.digest('SHA-256', data)).equals(hash);
}
