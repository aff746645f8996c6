import { createHash, webcrypto } from 'node:crypto';

// From this size, a block's SHA-256 is computed on libuv's threads (WebCrypto), off the event loop:
// about a third of the event loop's time per block of 128 KiB, the copy it makes included. A small
// block is hashed in place, quicker than the round trip.
const HASH_ELSEWHERE = 32 * 1024;

/** Whether `data` has the SHA-256 `hash`; `data` must not change until this has settled. */
export async function hasSha256(data: Uint8Array, hash: Uint8Array): Promise<boolean> {
  if (data.length < HASH_ELSEWHERE) return createHash('sha256').update(data).digest().equals(hash);
  return Buffer.from(await webcrypto.subtle.digest('SHA-256', data)).equals(hash);
}
