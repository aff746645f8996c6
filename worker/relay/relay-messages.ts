// The relay protocol's messages (lib/relay/protocol, Syncthing 1.19): a 12-byte header (magic, type,
// length) and an XDR body of at most 1024 bytes, read and written here with every length checked first.

const MAGIC = 0x9e79bc40;
const HEADER_BYTES = 12;
/** A relay drops a message longer than this (protocol.go ReadMessage), and so does syncd. */
export const MAX_MESSAGE_BYTES = 1024;
// XDR opaque<32>: keys, device IDs and addresses.
const MAX_OPAQUE = 32;

// A Response's code for success (protocol.go); the others (1 not found, 2 already connected) come as
// errors named by their message.
export const RESPONSE_SUCCESS = 0;

export type RelayMessage =
  | { type: 'Ping' }
  | { type: 'Pong' }
  | { type: 'JoinRelayRequest' }
  | { type: 'JoinSessionRequest'; key: Buffer }
  | { type: 'Response'; code: number; message: string }
  | { type: 'ConnectRequest'; id: Buffer }
  | { type: 'SessionInvitation'; invitation: SessionInvitation }
  | { type: 'RelayFull' };

export interface SessionInvitation {
  /** The other device's ID, 32 raw bytes. */
  from: Buffer;
  key: Buffer;
  /** The relay's session address as it sends it: 4 or 16 bytes, or none (the relay's own address). */
  address: Buffer;
  port: number;
  /** Whether this side is the TLS server of the session. */
  serverSocket: boolean;
}

// The numbers are the order of packets.go's iota.
const TYPES = [
  'Ping',
  'Pong',
  'JoinRelayRequest',
  'JoinSessionRequest',
  'Response',
  'ConnectRequest',
  'SessionInvitation',
  'RelayFull',
] as const satisfies ReadonlyArray<RelayMessage['type']>;

/** A message the relay or a peer sent that breaks the protocol: the connection is dropped. */
export class RelayProtocolError extends Error {
  override name = 'RelayProtocolError';
}

export function encodeRelayMessage(message: RelayMessage): Buffer {
  const body = new XdrWriter();
  switch (message.type) {
    case 'JoinSessionRequest':
      body.opaque(message.key);
      break;
    case 'Response':
      body.uint32(message.code);
      body.opaque(Buffer.from(message.message), MAX_MESSAGE_BYTES);
      break;
    case 'ConnectRequest':
      body.opaque(message.id);
      break;
    case 'SessionInvitation': {
      const { from, key, address, port, serverSocket } = message.invitation;
      body.opaque(from);
      body.opaque(key);
      body.opaque(address);
      body.uint32(port & 0xffff);
      body.uint32(serverSocket ? 1 : 0);
      break;
    }
    default:
      break;
  }
  const payload = body.done();
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32BE(MAGIC, 0);
  header.writeInt32BE(TYPES.indexOf(message.type), 4);
  header.writeInt32BE(payload.length, 8);
  return Buffer.concat([header, payload]);
}

/**
 * Reads relay messages from a stream's chunks: `push` each chunk, then take the whole messages it
 * completed (`atMost` of them: what follows may be another protocol's). Throws RelayProtocolError on a bad magic, length, type or body.
 */
export class RelayMessageReader {
  #buffered: Buffer = Buffer.alloc(0);

  push(chunk: Buffer, atMost = Number.POSITIVE_INFINITY): RelayMessage[] {
    this.#buffered = this.#buffered.length === 0 ? chunk : Buffer.concat([this.#buffered, chunk]);
    const messages: RelayMessage[] = [];
    while (this.#buffered.length >= HEADER_BYTES && messages.length < atMost) {
      const magic = this.#buffered.readUInt32BE(0);
      if (magic !== MAGIC)
        throw new RelayProtocolError(`not a relay message (magic 0x${magic.toString(16)})`);
      const type = this.#buffered.readInt32BE(4);
      const length = this.#buffered.readInt32BE(8);
      if (length < 0 || length > MAX_MESSAGE_BYTES)
        throw new RelayProtocolError(`a relay message of ${length} bytes (at most ${MAX_MESSAGE_BYTES})`);
      if (this.#buffered.length < HEADER_BYTES + length) break;
      const body = this.#buffered.subarray(HEADER_BYTES, HEADER_BYTES + length);
      this.#buffered = this.#buffered.subarray(HEADER_BYTES + length);
      messages.push(decodeBody(type, Buffer.from(body)));
    }
    return messages;
  }

  /** Bytes read past the last whole message: on a session socket, the first of the relayed stream. */
  rest(): Buffer {
    return this.#buffered;
  }
}

function decodeBody(type: number, body: Buffer): RelayMessage {
  const name = TYPES[type];
  if (name === undefined) throw new RelayProtocolError(`unknown relay message type ${type}`);
  const reader = new XdrReader(body, name);
  switch (name) {
    case 'JoinSessionRequest':
      return { type: name, key: reader.opaque() };
    case 'Response':
      return { type: name, code: reader.int32(), message: reader.opaque(MAX_MESSAGE_BYTES).toString() };
    case 'ConnectRequest':
      return { type: name, id: reader.opaque() };
    case 'SessionInvitation':
      return {
        type: name,
        invitation: {
          from: reader.opaque(),
          key: reader.opaque(),
          address: reader.opaque(),
          port: reader.uint32() & 0xffff,
          serverSocket: reader.uint32() !== 0,
        },
      };
    // Ping, Pong, RelayFull and 1.19's JoinRelayRequest carry nothing; a newer relay's join may carry a
    // token, which a client never receives.
    default:
      return { type: name };
  }
}

class XdrWriter {
  readonly #parts: Buffer[] = [];

  uint32(value: number): void {
    const part = Buffer.alloc(4);
    part.writeUInt32BE(value >>> 0);
    this.#parts.push(part);
  }

  opaque(value: Buffer, max = MAX_OPAQUE): void {
    if (value.length > max) throw new RangeError(`an XDR field of ${value.length} bytes (at most ${max})`);
    this.uint32(value.length);
    this.#parts.push(value, Buffer.alloc((4 - (value.length % 4)) % 4));
  }

  done(): Buffer {
    return Buffer.concat(this.#parts);
  }
}

class XdrReader {
  #at = 0;
  constructor(
    readonly body: Buffer,
    readonly name: string,
  ) {}

  uint32(): number {
    if (this.#at + 4 > this.body.length) throw new RelayProtocolError(`a ${this.name} cut short`);
    const value = this.body.readUInt32BE(this.#at);
    this.#at += 4;
    return value;
  }

  int32(): number {
    return this.uint32() | 0;
  }

  opaque(max = MAX_OPAQUE): Buffer {
    const length = this.uint32();
    if (length > max)
      throw new RelayProtocolError(`a ${this.name} field of ${length} bytes (at most ${max})`);
    const end = this.#at + length;
    if (end > this.body.length) throw new RelayProtocolError(`a ${this.name} cut short`);
    const value = Buffer.from(this.body.subarray(this.#at, end));
    this.#at = end + ((4 - (length % 4)) % 4);
    return value;
  }
}
