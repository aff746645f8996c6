import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { relative } from 'node:path';
import { FolderFs } from '../files/folder-fs.ts';
import { adler32Of, blockBuffer } from '../checksums/adler32.ts';
import { type Block, EMPTY_HASH } from '../records/blocks.ts';

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
