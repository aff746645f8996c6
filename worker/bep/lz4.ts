import { compressBlock } from 'lz4js';

// LZ4's densest encoding: a match of 255 more bytes per byte of length. No block decodes to more than
// this many times its own size, so a size prefix beyond it is a lie and is refused before anything is
// allocated for it.
const MAX_RATIO = 255;
const MIN_MATCH = 4;
const SHORT_COPY = 32;

export class Lz4Error extends Error {
  override name = 'Lz4Error';
}

/**
 * The LZ4 block of `data` (Syncthing's framing: the uncompressed size as a big-endian u32, then one raw
 * block), or undefined when compressing saves less than 1/32 of it, as Syncthing decides: then the
 * message goes uncompressed.
 */
export function lz4Compress(data: Uint8Array): Buffer | undefined {
  const out = Buffer.allocUnsafe(4 + compressBound(data.length));
  out.writeUInt32BE(data.length, 0);
  const size = compressBlock(data, out.subarray(4), 0, data.length, hashTable());
  if (size === 0 || size > data.length - data.length / 32) return undefined;
  return out.subarray(0, 4 + size);
}

/**
 * Decodes Syncthing's LZ4 framing. The size prefix is checked against `maxSize` and against what the
 * block could possibly hold before the output is allocated, and every literal and match is checked
 * against both buffers: a hostile block is an Lz4Error, never a write out of bounds or a long loop.
 */
export function lz4Decompress(framed: Uint8Array, maxSize: number): Buffer {
  if (framed.length < 4) throw new Lz4Error('compressed message shorter than its size prefix');
  const size = Buffer.from(framed.buffer, framed.byteOffset, framed.length).readUInt32BE(0);
  const src = framed.subarray(4);
  if (size > maxSize)
    throw new Lz4Error(`compressed message claims ${size} bytes, over the limit of ${maxSize}`);
  if (size > src.length * MAX_RATIO + 16) {
    throw new Lz4Error(
      `compressed message claims ${size} bytes, more than ${src.length} bytes of LZ4 can hold`,
    );
  }
  const dst = Buffer.allocUnsafe(size);
  const written = decodeBlock(src, dst);
  if (written !== size)
    throw new Lz4Error(`compressed message decoded to ${written} bytes, not the ${size} it claims`);
  return dst;
}

function decodeBlock(src: Uint8Array, dst: Buffer): number {
  const srcEnd = src.length;
  const dstEnd = dst.length;
  let s = 0;
  let d = 0;
  while (s < srcEnd) {
    const token = src[s++] as number;
    let literals = token >> 4;
    if (literals === 15) {
      for (let byte = 255; byte === 255;) {
        if (s >= srcEnd) throw new Lz4Error('LZ4 literal length runs past the end of the block');
        byte = src[s++] as number;
        literals += byte;
      }
    }
    if (s + literals > srcEnd || d + literals > dstEnd) throw new Lz4Error('LZ4 literals run past a buffer');
    // Short runs are copied byte by byte: a subarray per run costs more than it saves.
    if (literals < SHORT_COPY) {
      for (const end = s + literals; s < end;) dst[d++] = src[s++] as number;
    } else {
      dst.set(src.subarray(s, s + literals), d);
      s += literals;
      d += literals;
    }
    // The last sequence has literals only.
    if (s === srcEnd) break;
    if (s + 2 > srcEnd) throw new Lz4Error('LZ4 match offset runs past the end of the block');
    const offset = (src[s] as number) | ((src[s + 1] as number) << 8);
    s += 2;
    if (offset === 0 || offset > d) throw new Lz4Error('LZ4 match points before the start of the output');
    let length = token & 15;
    if (length === 15) {
      for (let byte = 255; byte === 255;) {
        if (s >= srcEnd) throw new Lz4Error('LZ4 match length runs past the end of the block');
        byte = src[s++] as number;
        length += byte;
      }
    }
    length += MIN_MATCH;
    if (d + length > dstEnd) throw new Lz4Error('LZ4 match runs past the end of the output');
    if (offset >= length && length >= SHORT_COPY) {
      dst.copyWithin(d, d - offset, d - offset + length);
      d += length;
    } else {
      // Byte by byte, which also repeats what an overlapping match has just written.
      for (let from = d - offset, end = d + length; d < end;) dst[d++] = dst[from++] as number;
    }
  }
  return d;
}

function compressBound(n: number): number {
  return n + Math.ceil(n / 255) + 16;
}

// compressBlock wants a zeroed table each time; one per call is 256 KiB of garbage, one kept is reused.
let table: Uint32Array | undefined;
function hashTable(): Uint32Array {
  if (table) table.fill(0);
  else table = new Uint32Array(1 << 16);
  return table;
}
