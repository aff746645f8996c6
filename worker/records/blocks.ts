import { createHash } from 'node:crypto';

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

/** SHA-256 of nothing: the hash of the one empty block an empty file has. */
export const EMPTY_HASH = createHash('sha256').digest();
