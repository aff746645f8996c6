import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';

/** A block of a file as Syncthing indexes it: where it is, how long, its SHA-256 and Adler-32. */
export interface Block {
  offset: number;
  size: number;
  hash: Buffer;
  weakHash: number;
}

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

// Adler-32 as Go's hash/adler32 computes it; sums are reduced every NMAX bytes, the most that cannot
// overflow 32 bits.
const MOD = 65521;
const NMAX = 5552;

export function adler32(data: Uint8Array, start = 0, end = data.length): number {
  let a = 1;
  let b = 0;
  let i = start;
  while (i < end) {
    const stop = Math.min(i + NMAX, end);
    for (; i < stop; i++) {
      a += data[i] as number;
      b += a;
    }
    a %= MOD;
    b %= MOD;
  }
  return ((b << 16) | a) >>> 0;
}

/** SHA-256 of nothing: the hash of the one empty block an empty file has. */
const EMPTY_HASH = createHash('sha256').digest();

/**
 * Reads a file and cuts it into blocks of `blockSize`, hashing each. An empty file is one empty block,
 * as Syncthing indexes it. Throws what reading throws (a file gone, unreadable); a file that changed
 * size while read is an error too, since its blocks would describe neither version.
 */
export async function hashFile(path: string, expectedSize: number, blockSize: number): Promise<Block[]> {
  if (expectedSize === 0) return [{ offset: 0, size: 0, hash: EMPTY_HASH, weakHash: 1 }];
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(blockSize);
    const blocks: Block[] = [];
    let offset = 0;
    for (;;) {
      let filled = 0;
      while (filled < blockSize) {
        const { bytesRead } = await handle.read(buffer, filled, blockSize - filled, offset + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      if (filled === 0) break;
      blocks.push({
        offset,
        size: filled,
        hash: createHash('sha256').update(buffer.subarray(0, filled)).digest(),
        weakHash: adler32(buffer, 0, filled),
      });
      offset += filled;
      if (filled < blockSize) break;
    }
    if (offset !== expectedSize) {
      throw Object.assign(new Error(`changed size while being read (${expectedSize} → ${offset} bytes)`), {
        code: 'ECHANGED',
      });
    }
    return blocks;
  } finally {
    await handle.close();
  }
}
