// A malicious but configured device of Syncthing's protocol, for the hostile-peer tests and the
// `--hostile` bench: real TLS with a device identity of its own, the Hellos, then whatever a test makes
// it send, well-formed (through syncd's own encoders) or built by hand byte by byte where the schema
// cannot say the attack. It records everything syncd sends, answers syncd's Requests from the files it
// announced, and says when and why syncd closed the connection.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect, type TLSSocket } from 'node:tls';
import { create, type MessageInitShape, toBinary } from '@bufbuild/protobuf';
import { rawDeviceId, shortIdOf } from '../../shared/device-id.ts';
import {
  ClusterConfigSchema,
  ErrorCode,
  type FileInfo,
  FileInfoSchema,
  FileInfoType,
  HeaderSchema,
  type Hello,
  MessageCompression,
  MessageType,
  ResponseSchema,
} from '../../worker/bep/bep_pb.ts';
import { encodeHello, encodeMessage, FrameReader } from '../../worker/bep/frames.ts';
import { lz4Compress } from '../../worker/bep/lz4.ts';
import type { BepMessage, MessageOf } from '../../worker/bep/messages.ts';
import { clientOptions } from '../../worker/bep/tls-options.ts';
import { newTestDevice, type TestDevice } from './device.ts';
import { api, call, type Service, waitFor } from './service.ts';

export { MessageType };

const BLOCK_SIZE = 128 * 1024;

/** A FileInfo's fields, as `create` takes them. */
export type FileFields = Exclude<MessageInitShape<typeof FileInfoSchema>, FileInfo> & { name: string };

/**
 * The peer's side of one shared folder, kept across its connections: its index ID, the files it
 * announces (each new version with the next counter and sequence, so that it wins over the last) and
 * their bytes, which the peer serves when syncd asks.
 */
export class PeerFolder {
  readonly files = new Map<string, FileInfo>();
  readonly data = new Map<string, Buffer>();
  readonly indexId = 0x5eed_0000_0000_0001n;
  #sequence = 0n;
  #counter = 0n;
  readonly #me: bigint;

  constructor(
    readonly id: string,
    readonly device: TestDevice,
  ) {
    this.#me = shortIdOf(device.id);
  }

  /** A regular file with real blocks of 128 KiB; `fields` win (a `version` replaces the peer's own). */
  file(name: string, data: Buffer, fields: Omit<FileFields, 'name'> = {}): FileInfo {
    this.data.set(name, data);
    const blocks = [];
    // An empty file is one empty block, as Syncthing makes it.
    for (let offset = 0; offset === 0 || offset < data.length; offset += BLOCK_SIZE) {
      const block = data.subarray(offset, offset + BLOCK_SIZE);
      blocks.push({ offset: BigInt(offset), size: block.length, hash: sha256(block) });
    }
    return this.#record({ name, type: FileInfoType.FILE, size: BigInt(data.length), blocks, ...fields });
  }

  directory(name: string): FileInfo {
    return this.#record({ name, type: FileInfoType.DIRECTORY, permissions: 0o755 });
  }

  symlink(name: string, target: string): FileInfo {
    return this.#record({ name, type: FileInfoType.SYMLINK, symlinkTarget: Buffer.from(target) });
  }

  deleted(name: string): FileInfo {
    const was = this.files.get(name);
    return this.#record({ name, type: was?.type ?? FileInfoType.FILE, deleted: true });
  }

  /** Any FileInfo, as given, with the next version and sequence (a 1 TiB file's made-up blocks). */
  record(fields: FileFields): FileInfo {
    return this.#record(fields);
  }

  #record(fields: FileFields): FileInfo {
    this.#sequence += 1n;
    this.#counter += 1n;
    const info = create(FileInfoSchema, {
      permissions: 0o644,
      modifiedS: BigInt(Math.floor(Date.now() / 1000)),
      modifiedBy: this.#me,
      blockSize: BLOCK_SIZE,
      version: { counters: [{ id: this.#me, value: this.#counter }] },
      sequence: this.#sequence,
      ...fields,
    });
    this.files.set(info.name, info);
    return info;
  }

  /**
   * The ClusterConfig that shares this folder with syncd: this side's index ID and sequence, and
   * nothing of syncd's index (so syncd sends all of it on each connection).
   */
  clusterConfig(syncdId: string): MessageOf<'ClusterConfig'> {
    return create(ClusterConfigSchema, {
      folders: [
        {
          id: this.id,
          label: this.id,
          devices: [
            { id: rawDeviceId(syncdId), name: 'syncd' },
            {
              id: rawDeviceId(this.device.id),
              name: 'hostile',
              indexId: this.indexId,
              maxSequence: this.#sequence,
            },
          ],
        },
      ],
    });
  }
}

export interface PeerEnd {
  /** The reason of syncd's Close, when it sent one before closing. */
  reason: string | undefined;
  at: number;
}

/**
 * One connection to syncd's sync address. `send` and `sendRaw` write; `messages`, `requests` and
 * `responses` are what syncd sent so far; `ended` settles when the connection is gone.
 */
export class HostilePeer {
  readonly socket: TLSSocket;
  readonly messages: BepMessage[] = [];
  readonly requests: Array<MessageOf<'Request'>> = [];
  readonly responses: Array<MessageOf<'Response'>> = [];
  hello: Hello | undefined;
  end: PeerEnd | undefined;
  readonly ended: Promise<PeerEnd>;
  /** What syncd sent that broke the protocol as this side reads it (worth a look in a failure). */
  readError: Error | undefined;
  /** Whether syncd's Requests are answered from `folder` (else they are only recorded). */
  answering = true;
  readonly #reader = new FrameReader();
  #close: string | undefined;

  private constructor(
    socket: TLSSocket,
    readonly folder: PeerFolder | undefined,
  ) {
    this.socket = socket;
    this.ended = new Promise((resolve) =>
      socket.once('close', () => resolve((this.end = { reason: this.#close, at: Date.now() }))),
    );
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
  }

  /** Connects to `address` (tcp://HOST:PORT) as `device`, and sends its Hello (`hello`, when given). */
  static async connect(
    address: string,
    device: TestDevice,
    folder?: PeerFolder,
    hello = encodeHello({ deviceName: 'hostile', clientName: 'hostile-peer', clientVersion: 'v1.19.2' }),
  ): Promise<HostilePeer> {
    const { hostname, port } = new URL(address.replace(/^tcp\d?:/, 'http:'));
    const socket = connect({ host: hostname, port: Number(port), ...clientOptions(device) });
    const peer = new HostilePeer(socket, folder);
    await new Promise<void>((resolve, reject) => {
      socket.once('secureConnect', resolve);
      socket.once('error', reject);
    });
    socket.write(hello);
    return peer;
  }

  get closed(): boolean {
    return this.end !== undefined;
  }

  send(message: BepMessage): void {
    this.sendRaw(encodeMessage(message));
  }

  sendRaw(bytes: Uint8Array): void {
    if (!this.socket.destroyed) this.socket.write(bytes);
  }

  /** Stops reading the socket: syncd's writes back up in the kernel and then in syncd. */
  stopReading(): void {
    this.socket.pause();
  }

  /** Polls until `check` holds, or the connection ended (then `check` decides one last time). */
  async until<T>(what: string, check: () => T | undefined | false, ms = 20_000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = check();
      if (value !== undefined && value !== false) return value;
      if (this.closed)
        throw new Error(`${what}: the connection ended first (${this.end?.reason ?? 'no Close'})`);
      if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Whether syncd closes the connection within `ms`. */
  async closedWithin(ms: number): Promise<PeerEnd | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    });
    try {
      return await Promise.race([this.ended, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ends the connection from this side and waits until it is gone. */
  async close(): Promise<void> {
    this.socket.destroy();
    await this.ended;
  }

  #read(chunk: Buffer): void {
    if (this.readError) return;
    this.#reader.push(chunk);
    try {
      for (let frame = this.#reader.next(); frame; frame = this.#reader.next()) {
        if (frame.kind === 'hello') this.hello = frame.hello;
        else this.#received(frame.message);
      }
    } catch (error) {
      this.readError = error as Error;
    }
  }

  #received(message: BepMessage): void {
    this.messages.push(message);
    if (message.kind === 'Close') this.#close = message.body.reason;
    if (message.kind === 'Response') this.responses.push(message.body);
    if (message.kind !== 'Request') return;
    this.requests.push(message.body);
    if (!this.answering) return;
    const { id, name, offset, size } = message.body;
    const data = this.folder?.data.get(name)?.subarray(Number(offset), Number(offset) + size);
    const answer = data?.length === size ? { id, data } : { id, code: ErrorCode.NO_SUCH_FILE };
    this.send({ kind: 'Response', body: create(ResponseSchema, answer) });
  }
}

/** A hostile device configured in syncd, sharing one folder with it: its connections one at a time. */
export interface HostileDevice {
  device: TestDevice;
  folder: PeerFolder;
  /** syncd's device ID and sync address. */
  syncdId: string;
  listen: string;
  /** Every connection made, for a teardown to close. */
  opened: HostilePeer[];
  /**
   * A new connection, once syncd has let the last one go (it refuses a second one within 10 s of the
   * first); with `share` (the default), the ClusterConfig sharing the folder is sent and syncd's awaited.
   */
  connect(share?: boolean): Promise<HostilePeer>;
}

/**
 * Configures a new hostile device in `syncd` and a folder at `path` shared with it (send-receive, no
 * watcher, rescans only when asked), and waits for the folder's first scan.
 */
export async function shareWithHostile(syncd: Service, id: string, path: string): Promise<HostileDevice> {
  const status = await api<{
    myID: string;
    connectionServiceStatus: Record<string, { lanAddresses: string[] }>;
  }>(syncd, 'GET', '/rest/system/status');
  const listen = Object.values(status.connectionServiceStatus)[0]?.lanAddresses[0] ?? '';
  const device = await newTestDevice();
  const folder = new PeerFolder(id, device);
  await api(syncd, 'POST', '/rest/config/devices', {
    deviceID: device.id,
    name: 'hostile',
    addresses: ['dynamic'],
  });
  await api(syncd, 'POST', '/rest/config/folders', {
    id,
    path,
    devices: [{ deviceID: device.id }],
    type: 'sendreceive',
    fsWatcherEnabled: false,
    rescanIntervalS: 3600,
  });
  // Answers once the scan has ended; 409 until the new folder's runner exists.
  await waitFor('the first scan', () => api(syncd, 'POST', `/rest/db/scan?folder=${id}`).then(() => true));
  const opened: HostilePeer[] = [];
  const connected = async () => {
    const answer = await api<{ connections: Record<string, { connected: boolean }> }>(
      syncd,
      'GET',
      '/rest/system/connections',
    );
    return answer.connections[device.id]?.connected === true;
  };
  return {
    device,
    folder,
    syncdId: status.myID,
    listen,
    opened,
    async connect(share = true) {
      await waitFor('the last connection gone', async () => !(await connected()) || undefined, 20_000);
      const peer = await HostilePeer.connect(listen, device, folder);
      opened.push(peer);
      if (share) {
        peer.send({ kind: 'ClusterConfig', body: folder.clusterConfig(status.myID) });
        await peer.until("syncd's ClusterConfig", () =>
          peer.messages.some((m) => m.kind === 'ClusterConfig'),
        );
      }
      return peer;
    },
  };
}

/**
 * A frame built by hand: header length, Header {type, compression}, body length, body; with `lz4`,
 * the body is Syncthing's LZ4 framing (its uncompressed size, big-endian, then one raw block).
 */
export function rawFrame(type: MessageType, body: Uint8Array, lz4 = false): Buffer {
  const payload = lz4 ? lz4Compress(body) : body;
  if (!payload) throw new Error('the body does not compress');
  const compression = lz4 ? MessageCompression.LZ4 : MessageCompression.NONE;
  const header = toBinary(HeaderSchema, create(HeaderSchema, { type, compression }));
  const out = Buffer.alloc(2 + header.length + 4 + payload.length);
  out.writeUInt16BE(header.length, 0);
  out.set(header, 2);
  out.writeUInt32BE(payload.length, 2 + header.length);
  out.set(payload, 6 + header.length);
  return out;
}

/**
 * An Index body of `count` empty FileInfos (field 2, length 0: bytes 0x12 0x00 each), which no schema
 * makes: 8 million of them are 16 MB, and LZ4 brings that to about 63 KB.
 */
export function emptyFilesIndex(folder: string, count: number): Buffer {
  const head = new ProtoWriter(64 + folder.length * 4);
  head.string(1, folder);
  const out = Buffer.alloc(head.at + 2 * count);
  out.set(head.done(), 0);
  out.fill(Buffer.from([0x12, 0x00]), head.at);
  return out;
}

/**
 * An Index or IndexUpdate body of `count` small, well-formed deleted files (PREFIX + N in base 36),
 * written as bytes: a million FileInfo objects would cost the test seconds and hundreds of MB. With
 * `version`, each carries that counter (a device's short ID and value) and a sequence.
 */
export function deletedFilesIndex(
  folder: string,
  prefix: string,
  count: number,
  version?: { id: bigint; value: bigint },
): Buffer {
  const out = new ProtoWriter(64 + count * (24 + Buffer.byteLength(prefix) + (version ? 30 : 0)));
  out.string(1, folder);
  const entry = new ProtoWriter(256);
  for (let at = 0; at < count; at++) {
    entry.at = 0;
    entry.string(1, `${prefix}${at.toString(36)}`);
    entry.varint(6, 1); // deleted
    if (version) {
      const counter = new ProtoWriter(32);
      counter.varint(1, version.id);
      counter.varint(2, version.value);
      const vector = new ProtoWriter(40);
      vector.bytes(1, counter.done());
      entry.bytes(9, vector.done());
      entry.varint(10, at + 1); // sequence
    }
    out.bytes(2, entry.done());
  }
  return out.done();
}

/** Protobuf's wire format, written into a buffer of a size known in advance. */
class ProtoWriter {
  readonly #buffer: Buffer;
  at = 0;

  constructor(size: number) {
    this.#buffer = Buffer.alloc(size);
  }

  varint(field: number, value: number | bigint): void {
    this.#raw(field << 3);
    this.#raw(value);
  }

  bytes(field: number, bytes: Uint8Array): void {
    this.#raw((field << 3) | 2);
    this.#raw(bytes.length);
    this.#buffer.set(bytes, this.at);
    this.at += bytes.length;
  }

  string(field: number, text: string): void {
    this.bytes(field, Buffer.from(text));
  }

  done(): Buffer {
    return this.#buffer.subarray(0, this.at);
  }

  // Numbers for tags and lengths (bigints only for 64-bit values: they cost ten times as much).
  #raw(value: number | bigint): void {
    if (typeof value === 'bigint') {
      while (value >= 0x80n) {
        this.#buffer[this.at++] = Number(value & 0x7fn) | 0x80;
        value >>= 7n;
      }
      this.#buffer[this.at++] = Number(value);
      return;
    }
    while (value >= 0x80) {
      this.#buffer[this.at++] = (value % 128) | 0x80;
      value = Math.floor(value / 128);
    }
    this.#buffer[this.at++] = value;
  }
}

export function sha256(data: Uint8Array): Buffer {
  return createHash('sha256').update(data).digest();
}

/** A process's resident memory now, in MB (10^6 bytes, as the benchmarks count), from /proc (Linux). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return (Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024) / 1e6;
}

export interface Watched {
  beforeMb: number;
  peakMb: number;
  worstPingMs: number;
  pings: number;
  failedPings: number;
}

/**
 * Samples the worker's RSS every 50 ms and pings the REST interface one request after another, until
 * `stop`: the largest RSS, and the slowest ping (a ping that fails or takes over 10 s counts as failed).
 */
export function watchWorker(service: Service, pid: number): { stop(): Promise<Watched> } {
  const figures: Watched = { beforeMb: rssMb(pid), peakMb: 0, worstPingMs: 0, pings: 0, failedPings: 0 };
  figures.peakMb = figures.beforeMb;
  let running = true;
  const sampler = setInterval(() => {
    try {
      figures.peakMb = Math.max(figures.peakMb, rssMb(pid));
    } catch {
      // The worker is gone: the pid check after the case says so.
    }
  }, 50);
  const pinging = (async () => {
    while (running) {
      const started = performance.now();
      const ok = await call(service, 'GET', '/rest/system/ping')
        .then((reply) => reply.status === 200)
        .catch(() => false);
      figures.worstPingMs = Math.max(figures.worstPingMs, performance.now() - started);
      figures.pings += 1;
      if (!ok) figures.failedPings += 1;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    async stop() {
      running = false;
      await pinging;
      clearInterval(sampler);
      return figures;
    },
  };
}
