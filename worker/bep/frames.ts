import { create, fromBinary, type MessageInitShape, toBinary } from '@bufbuild/protobuf';
import {
  ErrorCode,
  type Hello,
  HelloSchema,
  HeaderSchema,
  MessageCompression,
  type Response,
} from './bep_pb.ts';
import { lz4Compress, lz4Decompress } from './lz4.ts';
import { MAX_MESSAGE_BYTES, MAX_RATIO, overLimit, RATIO_CHECKED_FROM } from './limits.ts';
import { type BepMessage, decodeBody, encodeBody, kindOf, typeOf } from './messages.ts';

/** The Hello's magic, and local discovery's. */
export const BEP_MAGIC = 0x2ea7d90b;
// Magics of protocol versions before v1, which Syncthing names as too old.
const OLD_MAGICS = new Set([0x00010001, 0x00010000, 0x9f79bc40]);
// Lengths on the wire are signed in Syncthing's reader: a u16 above this is negative, an error.
const MAX_SHORT = 0x7fff;
// Syncthing compresses messages of at least this many bytes (lib/protocol/compression.go).
const COMPRESS_FROM = 128;

/** What the peer sent breaks the protocol: the connection closes with this as its reason. */
export class ProtocolError extends Error {
  override name = 'ProtocolError';
}

export type Compression = 'metadata' | 'always' | 'never';

/** A Hello's fields, those left out at their defaults (syncd leaves out 2.x's, see bep.proto). */
export type HelloFields = Omit<MessageInitShape<typeof HelloSchema>, '$typeName'>;

export function encodeHello(hello: HelloFields): Buffer {
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
  // A Response is compressed only when everything is: otherwise it is framed without protobuf's writer.
  if (message.kind === 'Response' && compression !== 'always') return encodeResponse(message.body);
  const body = encodeBody(message);
  const wanted = compression !== 'never';
  const compressed = wanted && body.length >= COMPRESS_FROM ? lz4Compress(body) : undefined;
  const header = headerOf(message.kind, compressed !== undefined);
  const payload = compressed ?? body;
  const out = Buffer.allocUnsafe(2 + header.length + 4 + payload.length);
  out.writeUInt16BE(header.length, 0);
  out.set(header, 2);
  out.writeUInt32BE(payload.length, 2 + header.length);
  out.set(payload, 6 + header.length);
  return out;
}

// Each kind of message has two headers, compressed or not: encoded once each, not for every message.
const headers = new Map<string, Uint8Array>();
function headerOf(kind: BepMessage['kind'], compressed: boolean): Uint8Array {
  const key = `${kind}:${compressed}`;
  let header = headers.get(key);
  if (!header) {
    const compression = compressed ? MessageCompression.LZ4 : MessageCompression.NONE;
    header = toBinary(HeaderSchema, create(HeaderSchema, { type: typeOf(kind), compression }));
    headers.set(key, header);
  }
  return header;
}

// An uncompressed Response's header, the same for every one.
const RESPONSE_HEADER = headerOf('Response', false);

/**
 * A Response framed as encodeMessage frames it, its block copied once, straight into the frame: the
 * protobuf writer would grow a buffer to the block's size and copy it twice more, and a device
 * pulling a large file asks for thousands of them. The fields are written as protobuf writes them, in
 * field order, each left out at its default (tested against the generic encoding). A block read into
 * the room `responseRoom` gave is in its frame already, and not copied at all.
 */
function encodeResponse(response: Response): Buffer {
  const { id, data, code } = response;
  const room = rooms.get(data);
  if (room && room.id === id && code === ErrorCode.NO_ERROR) return room.frame;
  const { frame, dataAt } = responseFrame(id, data.length, code);
  frame.set(data, dataAt);
  return frame;
}

const rooms = new WeakMap<Uint8Array, { id: number; frame: Buffer }>();

/**
 * Room for a block of `size` bytes, inside the frame of a successful Response to request `id`: a
 * block read into it and sent as that Response's data goes out without being copied.
 */
export function responseRoom(id: number, size: number): Buffer {
  const { frame, dataAt } = responseFrame(id, size, ErrorCode.NO_ERROR, true);
  const room = frame.subarray(dataAt, dataAt + size);
  rooms.set(room, { id, frame });
  return room;
}

// Buffers for the frames of Responses sent and the bodies of messages received, kept once done with
// for the next of the same length. A large file moves as thousands of blocks: a new buffer for each
// left hundreds of MiB of garbage outside V8's heap, and each 64 MiB or so of it cost a full garbage
// collection (moving 300 MiB, a worker spent about a second of CPU time in GC). A buffer comes back
// only from whoever had it last: a Response's frame once the socket has written it (every byte of it
// is written again before it is sent again: the block read must fill its room, or it is dropped), and
// a received block once the puller has written it to its file.
const spares = new Map<number, Buffer[]>();
/** Every buffer made here, by the memory it lies in. */
const made = new WeakMap<ArrayBufferLike, Buffer>();
const spare = new WeakSet<Buffer>();
let spareBytes = 0;
const SPARE_BYTES = 32 * 1024 * 1024;
// Smaller ones are not worth it: they come from Node's shared pool.
const REUSED_FROM = 64 * 1024;

function takeBuffer(length: number): Buffer {
  const buffer = spares.get(length)?.pop();
  if (buffer) {
    spare.delete(buffer);
    spareBytes -= length;
    return buffer;
  }
  const fresh = Buffer.allocUnsafeSlow(length);
  made.set(fresh.buffer, fresh);
  return fresh;
}

/** Whether `frame` is one of the buffers made here: it is given back once written. */
export function isReusable(frame: Buffer): boolean {
  return made.get(frame.buffer) === frame;
}

/**
 * Whether `bytes` lie in a buffer made here, the memory of a received message alone: it may move to a
 * thread and come back (see worker/sync/block-writer.ts, and `cameBack`).
 */
export function movable(bytes: Uint8Array): boolean {
  return made.has(bytes.buffer);
}

/** The memory of a received message, moved to a thread and back: given back as its buffer would be. */
export function cameBack(memory: ArrayBuffer): void {
  const buffer = Buffer.from(memory);
  made.set(memory, buffer);
  giveBack(buffer);
}

/**
 * Gives back the buffer that `bytes` lie in, if it was made here, for the next frame or message of its
 * length: the caller must be the last to use any of it. A frame once its socket has written it; a
 * received block once it is written to its file.
 */
export function giveBack(bytes: Uint8Array): void {
  const buffer = made.get(bytes.buffer);
  if (!buffer || spare.has(buffer) || spareBytes + buffer.length > SPARE_BYTES) return;
  spare.add(buffer);
  spareBytes += buffer.length;
  const same = spares.get(buffer.length);
  if (same) same.push(buffer);
  else spares.set(buffer.length, [buffer]);
  // Once blocks stop moving, the spares go: an idle worker does not hold 32 MiB for the next transfer.
  (dropTimer ??= setTimeout(dropSpares, SPARES_KEPT_MS).unref()).refresh();
}

const SPARES_KEPT_MS = 5000;
let dropTimer: NodeJS.Timeout | undefined;

function dropSpares(): void {
  spares.clear();
  spareBytes = 0;
  dropTimer = undefined;
}

// The frame of a Response, all but the data's bytes written, and where those go.
function responseFrame(
  id: number,
  size: number,
  code: ErrorCode,
  reuse = false,
): { frame: Buffer; dataAt: number } {
  const idBytes = id === 0 ? 0 : 1 + varintLength(id);
  const dataBytes = size === 0 ? 0 : 1 + varintLength(size) + size;
  const codeBytes = code === 0 ? 0 : 1 + varintLength(code);
  const length = idBytes + dataBytes + codeBytes;
  const frameLength = 2 + RESPONSE_HEADER.length + 4 + length;
  const frame = reuse ? takeBuffer(frameLength) : Buffer.allocUnsafe(frameLength);
  frame.writeUInt16BE(RESPONSE_HEADER.length, 0);
  frame.set(RESPONSE_HEADER, 2);
  frame.writeUInt32BE(length, 2 + RESPONSE_HEADER.length);
  let at = 6 + RESPONSE_HEADER.length;
  if (idBytes > 0) {
    frame[at++] = 0x08; // field 1, varint
    at = writeVarint(frame, at, id);
  }
  let dataAt = at;
  if (dataBytes > 0) {
    frame[at++] = 0x12; // field 2, length-delimited
    at = writeVarint(frame, at, size);
    dataAt = at;
    at += size;
  }
  if (codeBytes > 0) {
    frame[at++] = 0x18; // field 3, varint
    writeVarint(frame, at, code);
  }
  return { frame, dataAt };
}

// An int32 or enum as protobuf writes it: a negative one as its 64-bit two's complement, ten bytes.
function varintLength(value: number): number {
  if (value < 0) return 10;
  let length = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 128);
    length += 1;
  }
  return length;
}

function writeVarint(out: Buffer, at: number, value: number): number {
  if (value < 0) {
    let rest = BigInt.asUintN(64, BigInt(value));
    while (rest >= 0x80n) {
      out[at++] = Number(rest & 0x7fn) | 0x80;
      rest >>= 7n;
    }
    out[at++] = Number(rest);
    return at;
  }
  while (value >= 0x80) {
    out[at++] = (value % 128) | 0x80;
    value = Math.floor(value / 128);
  }
  out[at++] = value;
  return at;
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

  /**
   * Bytes received, in order. A `transient` chunk is read into again once this returns (a buffer of
   * the connection's own, see dialer.ts): what is kept of it is copied, and `release` must follow the
   * frames read after it.
   */
  push(chunk: Buffer, transient = false): void {
    this.#queue.push(chunk, transient);
  }

  /** Keeps a copy of what is left of the transient chunk pushed last, which is read into again. */
  release(): void {
    this.#queue.release();
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
    if (queue.filling || queue.length < 2) return undefined;
    const headerLength = queue.peek(2).readUInt16BE(0);
    if (headerLength > MAX_SHORT) throw new ProtocolError(`header length ${headerLength} is out of range`);
    if (queue.length < 2 + headerLength + 4) return undefined;
    const lengths = queue.peek(2 + headerLength + 4);
    const length = lengths.readUInt32BE(2 + headerLength);
    if (length > this.#maxMessageBytes) {
      throw new ProtocolError(`message length ${length} is over the limit of ${this.#maxMessageBytes} bytes`);
    }
    const total = 2 + headerLength + 4 + length;
    if (queue.length < total) {
      // A large frame (a block's Response, mostly) is copied into its own buffer as it arrives, once.
      if (total >= REUSED_FROM && total <= RESERVED_AT_MOST) queue.fill(total);
      return undefined;
    }
    queue.skip(2);
    // Read where it lies: nothing of a header is kept.
    const header = decode('header', () =>
      fromBinary(HeaderSchema, queue.peek(headerLength), { readUnknownFields: false }),
    );
    queue.skip(headerLength + 4);
    let body: Uint8Array = queue.take(length);
    if (header.compression === MessageCompression.LZ4) {
      // Refused by its size prefix, before anything is allocated for it: more than the limit, or more
      // than MAX_RATIO times its compressed size past RATIO_CHECKED_FROM.
      const limit = Math.min(this.#maxMessageBytes, Math.max(RATIO_CHECKED_FROM, body.length * MAX_RATIO));
      const claimed = body.length >= 4 ? Buffer.from(body.buffer, body.byteOffset, 4).readUInt32BE(0) : 0;
      if (claimed > limit) {
        throw new ProtocolError(
          `${kindOf(header.type)} over a limit: ${body.length} bytes of LZ4 claim ${claimed} decompressed, more than ${limit} (at most ${MAX_RATIO} times their size, and ${this.#maxMessageBytes} bytes)`,
        );
      }
      body = decode('LZ4 body', () => lz4Decompress(body, limit));
    } else if (header.compression !== MessageCompression.NONE) {
      throw new ProtocolError(`unknown message compression ${header.compression}`);
    }
    // Bounded on the wire bytes, before any object is made of them.
    const over = overLimit(header.type, body);
    if (over) throw new ProtocolError(`${kindOf(header.type)} over a limit: ${over}`);
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

// A frame of this many bytes at most gets its buffer as soon as its length is known: a block's
// Response at its largest. A peer can make a connection hold this much by announcing it.
const RESERVED_AT_MOST = MAX_MESSAGE_BYTES + 1024;

/**
 * Received bytes in the chunks they came in; joined only for the frame that needs them, or copied into
 * the buffer of a large frame as they come (`fill`).
 */
class ByteQueue {
  #chunks: Buffer[] = [];
  length = 0;
  /** The memory of the transient chunk pushed last: what lies in it must be copied to be kept. */
  #transient: ArrayBufferLike | undefined;
  /** A frame's buffer being filled, and how much of it is. */
  #filling: { buffer: Buffer; filled: number } | undefined;

  /** Whether a frame's buffer is being filled: nothing can be read before it is full. */
  get filling(): boolean {
    return this.#filling !== undefined;
  }

  push(chunk: Buffer, transient = false): void {
    if (transient) this.#transient = chunk.buffer;
    const filling = this.#filling;
    if (filling) {
      const part = Math.min(chunk.length, filling.buffer.length - filling.filled);
      chunk.copy(filling.buffer, filling.filled, 0, part);
      filling.filled += part;
      this.length += part;
      chunk = chunk.subarray(part);
      if (filling.filled < filling.buffer.length) return;
      this.#chunks.unshift(filling.buffer);
      this.#filling = undefined;
    }
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.length += chunk.length;
  }

  /** Copies what is left of the transient chunk: its memory is read into again. */
  release(): void {
    const transient = this.#transient;
    if (!transient) return;
    this.#transient = undefined;
    this.#chunks = this.#chunks.map((chunk) => (chunk.buffer === transient ? Buffer.from(chunk) : chunk));
  }

  /**
   * The first `n` bytes will be one frame, not all here yet: they are copied into a buffer of their
   * own now, and those still to come as they come.
   */
  fill(n: number): void {
    const buffer = takeBuffer(n);
    let filled = 0;
    for (const chunk of this.#chunks) {
      chunk.copy(buffer, filled);
      filled += chunk.length;
    }
    this.#chunks = [];
    this.#filling = { buffer, filled };
  }

  /** The first `n` bytes, left in the queue. */
  peek(n: number): Buffer {
    this.#gather(n);
    return (this.#chunks[0] as Buffer).subarray(0, n);
  }

  /** The first `n` bytes, taken out of the queue: the caller's to keep. */
  take(n: number): Buffer {
    if (n === 0) return Buffer.alloc(0);
    const out = this.#cut(n);
    return out.buffer === this.#transient ? Buffer.from(out) : out;
  }

  skip(n: number): void {
    this.#cut(n);
  }

  #cut(n: number): Buffer {
    this.#gather(n);
    const first = this.#chunks[0] as Buffer;
    if (first.length === n) this.#chunks.shift();
    else this.#chunks[0] = first.subarray(n);
    this.length -= n;
    return first.subarray(0, n);
  }

  // Joins exactly n bytes into the first chunk (the caller has checked that there are), the rest of
  // the last chunk left after it: a message's body joined so is its alone, and can be given back.
  #gather(n: number): void {
    const chunks = this.#chunks;
    if ((chunks[0] as Buffer).length >= n) return;
    const joined = n >= REUSED_FROM ? takeBuffer(n) : Buffer.allocUnsafe(n);
    let at = 0;
    let count = 0;
    while (at < n) {
      const chunk = chunks[count] as Buffer;
      const part = Math.min(chunk.length, n - at);
      chunk.copy(joined, at, 0, part);
      at += part;
      if (part === chunk.length) count += 1;
      else chunks[count] = chunk.subarray(part);
    }
    chunks.splice(0, count, joined);
  }
}
