/**
 * Copies `source` into `target` at `at`, with memcpy. Into shared memory, Buffer#copy and
 * TypedArray#set copy with V8's relaxed memmove, byte by byte where the two offsets differ in alignment
 * (a TLS chunk's bytes into their frame, nearly always): 200 ms of the worker's thread per 300 MiB,
 * against 10. Buffer#fill with a buffer as its value is Node's memcpy.
 */
export function copyBytes(source: Uint8Array, target: Buffer, at: number): void {
  if (source.length > 0) target.fill(source, at, at + source.length);
}
