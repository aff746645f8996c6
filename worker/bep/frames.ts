import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { type Hello, HelloSchema, HeaderSchema, MessageCompression } from './bep_pb.ts';
import { lz4Compress, lz4Decompress } from './lz4.ts';
import { type BepMessage, decodeBody, encodeBody, typeOf } from './messages.ts';

/** The Hello's magic, and local discovery's. */
export const BEP_MAGIC = 0x2ea7d90b;
// Magics of protocol versions before v1, which Syncthing names as too old.
const OLD_MAGICS = new Set([0x00010001, 0x00010000, 0x9f79bc40]);
/** Syncthing's limit on a message, compressed or not (lib/protocol/protocol.go). */
export const MAX_MESSAGE_BYTES = 500_000_000;
// Lengths on the wire are signed in Syncthing's reader: a u16 above this is negative, an error.
const MAX_SHORT = 0x7fff;
// Syncthing compresses messages of at least this many bytes (lib/protocol/compression.go).
const COMPRESS_FROM = 128;

/** What the peer sent breaks the protocol: the connection closes with this as its reason. */
export class ProtocolError extends Error {
  override name = 'ProtocolError';
}

export type Compression = 'metadata' | 'always' | 'never';

export function encodeHello(hello: Omit<Hello, '$typeName'>): Buffer {
  const body = toBinary(HelloSchema, create(HelloSchema, hello));
  const out = Buffer.allocUnsafe(6 + body.length);
  out.writeUInt32BE(BEP_MAGIC, 0);
  out.writeUInt16BE(body.length, 4);
  out.set(body, 6);
  return out;
}

/**
 * A message as Syncthing frames it: header length, header, message length, body; the body LZ4
 * compressed as the device's `compression` setting says (`metadata`: everything but Responses), when
 * that saves enough.
 */
export function encodeMessage(message: BepMessage, compression: Compression = 'metadata'): Buffer {
  const body = encodeBody(message);
  const wanted = compression === 'always' || (compression === 'metadata' && message.kind !== 'Response');
  const compressed = wanted && body.length >= COMPRESS_FROM ? lz4Compress(body) : undefined;
  const header = toBinary(
    HeaderSchema,
    create(HeaderSchema, {
      type: typeOf(message.kind),
      compression: compressed ? MessageCompression.LZ4 : MessageCompression.NONE,
    }),
  );
  const payload = compressed ?? body;
  const out = Buffer.allocUnsafe(2 + header.length + 4 + payload.length);
  out.writeUInt16BE(header.length, 0);
  out.set(header, 2);
  out.writeUInt32BE(payload.length, 2 + header.length);
  out.set(payload, 6 + header.length);
  return out;
}

export type Frame = { kind: 'hello'; hello: Hello } | { kind: 'message'; message: BepMessage };

/**
 * Reads a peer's stream: the Hello, then messages. Bytes are kept only as they arrive, never
 * allocated for a length the peer merely announces; every length is checked against Syncthing's
 * limits before it is waited for. Whatever breaks the protocol throws a ProtocolError.
 */
export class FrameReader {
  readonly #queue = new ByteQueue();
  #helloRead = false;
  readonly #maxMessageBytes: number;

  constructor(maxMessageBytes = MAX_MESSAGE_BYTES) {
    this.#maxMessageBytes = maxMessageBytes;
  }

  /** Bytes held that do not yet make a frame. */
  get buffered(): number {
    return this.#queue.length;
  }

  push(chunk: Buffer): void {
    this.#queue.push(chunk);
  }

  /** The next whole frame, or undefined until more bytes arrive. Skips messages of unknown types. */
  next(): Frame | undefined {
    for (;;) {
      if (!this.#helloRead) return this.#hello();
      const frame = this.#message();
      if (frame !== 'skipped') return frame;
    }
  }

  #hello(): Frame | undefined {
    const queue = this.#queue;
    if (queue.length < 6) return undefined;
    const head = queue.peek(6);
    const magic = head.readUInt32BE(0);
    if (magic !== BEP_MAGIC) {
      throw new ProtocolError(
        OLD_MAGICS.has(magic)
          ? `the peer speaks a protocol version before BEP v1 (magic 0x${magic.toString(16)})`
          : `not BEP: unknown magic 0x${magic.toString(16).padStart(8, '0')}`,
      );
    }
    const length = head.readUInt16BE(4);
    if (length > MAX_SHORT) throw new ProtocolError(`Hello length ${length} is out of range`);
    if (queue.length < 6 + length) return undefined;
    queue.skip(6);
    const hello = decode('Hello', () =>
      fromBinary(HelloSchema, queue.take(length), { readUnknownFields: false }),
    );
    this.#helloRead = true;
    return { kind: 'hello', hello };
  }

  #message(): Frame | 'skipped' | undefined {
    const queue = this.#queue;
    if (queue.length < 2) return undefined;
    const headerLength = queue.peek(2).readUInt16BE(0);
    if (headerLength > MAX_SHORT) throw new ProtocolError(`header length ${headerLength} is out of range`);
    if (queue.length < 2 + headerLength + 4) return undefined;
    const lengths = queue.peek(2 + headerLength + 4);
    const length = lengths.readUInt32BE(2 + headerLength);
    if (length > this.#maxMessageBytes) {
      throw new ProtocolError(`message length ${length} is over the limit of ${this.#maxMessageBytes} bytes`);
    }
    if (queue.length < 2 + headerLength + 4 + length) return undefined;
    queue.skip(2);
    const header = decode('header', () =>
      fromBinary(HeaderSchema, queue.take(headerLength), { readUnknownFields: false }),
    );
    queue.skip(4);
    let body: Uint8Array = queue.take(length);
    if (header.compression === MessageCompression.LZ4) {
      body = decode('LZ4 body', () => lz4Decompress(body, this.#maxMessageBytes));
    } else if (header.compression !== MessageCompression.NONE) {
      throw new ProtocolError(`unknown message compression ${header.compression}`);
    }
    const message = decode(`message of type ${header.type}`, () => decodeBody(header.type, body));
    return message ? { kind: 'message', message } : 'skipped';
  }
}

function decode<T>(what: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw new ProtocolError(`malformed ${what}: ${(error as Error).message}`, { cause: error });
  }
}

/** Received bytes in the chunks they came in; joined only for the frame that needs them. */
class ByteQueue {
  #chunks: Buffer[] = [];
  length = 0;

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.length += chunk.length;
  }

  /** The first `n` bytes, left in the queue. */
  peek(n: number): Buffer {
    this.#gather(n);
    return (this.#chunks[0] as Buffer).subarray(0, n);
  }

  /** The first `n` bytes, taken out of the queue. */
  take(n: number): Buffer {
    if (n === 0) return Buffer.alloc(0);
    this.#gather(n);
    const first = this.#chunks[0] as Buffer;
    const out = first.subarray(0, n);
    if (first.length === n) this.#chunks.shift();
    else this.#chunks[0] = first.subarray(n);
    this.length -= n;
    return out;
  }

  skip(n: number): void {
    this.take(n);
  }

  // Joins chunks until the first holds at least n bytes (the caller has checked that there are).
  #gather(n: number): void {
    const first = this.#chunks[0] as Buffer;
    if (first.length >= n) return;
    let count = 0;
    let size = 0;
    while (size < n) size += (this.#chunks[count++] as Buffer).length;
    this.#chunks.splice(0, count, Buffer.concat(this.#chunks.slice(0, count), size));
  }
}
