import type { TLSSocket } from 'node:tls';
import { create } from '@bufbuild/protobuf';
import { CloseSchema, ErrorCode, type Hello, PingSchema, RequestSchema, type Response } from './bep_pb.ts';
import { type BlockRequest, RequestError } from './block-request.ts';
import {
  type Compression,
  encodeHello,
  encodeMessage,
  FrameReader,
  giveBack,
  type HelloFields,
  isReusable,
  ProtocolError,
} from './frames.ts';
import { MAX_MESSAGE_BYTES } from './limits.ts';
import type { BepMessage } from './messages.ts';

export interface SessionTimes {
  /** A Ping goes out when nothing was written for half of this (Syncthing: 90 s, checked every 45 s). */
  pingEveryMs: number;
  /** The peer is given up when nothing was received for this long (Syncthing: 300 s). */
  receiveTimeoutMs: number;
  /** The peer's Hello must come within this (Syncthing: 20 s). */
  helloTimeoutMs: number;
}

export const SYNCTHING_TIMES: SessionTimes = {
  pingEveryMs: 90_000,
  receiveTimeoutMs: 300_000,
  helloTimeoutMs: 20_000,
};

/**
 * Bytes of answers to a device's Requests in flight on one connection: being read, or waiting to be
 * written to the socket (Syncthing's maxConcurrentIncomingRequestKiB semantics, per connection; a
 * Syncthing pulling keeps at most its pullerMaxPendingKiB, 32 MiB, asked for). Requests past this wait
 * their turn, as Syncthing's wait for its limiter: a device that asks and never reads holds this
 * much of answers, and no more.
 */
export const MAX_ANSWERING_BYTES = 32 * 1024 * 1024;
/**
 * Requests waiting for their turn, past which the connection is not read until some are answered.
 * The reading goes on below it, as Syncthing's does, so that two devices pulling from each other
 * never wait on each other's reading; neither Syncthing's puller nor syncd's asks for this many.
 */
export const MAX_WAITING_REQUESTS = 4096;
// Bytes received and not yet read as frames while reading is held: what a peer that ignores a pause
// may push before it is cut off.
const MAX_HELD_BYTES = 2 * MAX_MESSAGE_BYTES;

type Hold = 'start' | 'handling' | 'requests' | 'bandwidth';

/** A frame waiting for the send limit, with when it may go (performance.now()). */
interface DelayedFrame {
  bytes: Buffer;
  bulk: boolean;
  written: (() => void) | undefined;
  at: number;
}

/** A connection's bandwidth limits: each answers the milliseconds its bytes must wait, or 0. */
export interface ConnectionLimits {
  send: (bytes: number) => number;
  receive: (bytes: number) => number;
}

/** What a message handler may answer: nothing, or a promise; the next message waits for it. */
export type MessageHandler = (message: BepMessage) => void | Promise<unknown>;

/** Why a session ended, and who ended it: `us` (a Close we sent), `peer` (its Close, or EOF), `error`. */
export interface SessionEnd {
  reason: string;
  by: 'us' | 'peer' | 'error';
}

/**
 * One BEP connection after its TLS handshake: the Hello exchange, then messages both ways, with
 * Syncthing's keep-alive (a Ping when idle) and receive timeout, and a Close with a reason at the end.
 * Whatever the peer sends that breaks the protocol ends the session with that as its reason; nothing a
 * peer sends can throw out of here.
 */
export class BepSession {
  readonly socket: TLSSocket;
  readonly #reader = new FrameReader();
  readonly #times: SessionTimes;
  #compression: Compression = 'metadata';
  #hello: ((hello: Hello) => void) | undefined;
  #helloRead = false;
  #onMessage: MessageHandler | undefined;
  /** Why the connection is not read now: not started, a message being handled, requests piling up. */
  readonly #holds = new Set<Hold>();
  /** Bytes of answers to Requests not yet written (see MAX_ANSWERING_BYTES), and the requests waiting. */
  #answering = 0;
  #waitingAnswers: Array<{ size: number; produce: () => Promise<Response> }> = [];
  /** What to call once a frame is written, for those that wait in #waiting or #waitingBulk. */
  readonly #afterWrite = new WeakMap<Buffer, () => void>();
  /** Frames waiting for the socket to drain, in order, but large Responses after the rest (see #write). */
  #waiting: Buffer[] = [];
  #waitingBulk: Buffer[] = [];
  #first = true;
  #lastRead = Date.now();
  #inBytes = 0;
  #outBytes = 0;
  #lastWrite = Date.now();
  #timer: NodeJS.Timeout | undefined;
  #end: SessionEnd | undefined;
  #onEnd: Array<(end: SessionEnd) => void> = [];
  // Requests sent and not yet answered, by ID (Syncthing's rawConnection awaiting map).
  readonly #requests = new Map<
    number,
    { resolve: (data: Uint8Array) => void; reject: (error: Error) => void }
  >();
  #nextRequest = 0;
  // How the peer is named in the errors of its requests.
  #peer = 'the device';
  /** The bandwidth limits (see devices/bandwidth.ts), and what waits for them. */
  #limits: ConnectionLimits | undefined;
  #delayed: DelayedFrame[] = [];
  #delayTimer: NodeJS.Timeout | undefined;
  #readPause: { timer: NodeJS.Timeout; until: number } | undefined;

  /**
   * `onData`, when given, is where the connection's bytes come from, each chunk valid only during the
   * call (a dialed connection reads into a buffer of its own, see dialer.ts); otherwise from the
   * socket's `data` events.
   */
  constructor(
    socket: TLSSocket,
    times: SessionTimes = SYNCTHING_TIMES,
    onData?: (listener: (chunk: Buffer) => void) => void,
  ) {
    this.socket = socket;
    this.#times = times;
    if (onData) onData((chunk) => this.#received(chunk, true));
    else socket.on('data', (chunk: Buffer) => this.#received(chunk, false));
    socket.on('end', () => this.#ended({ reason: 'the peer closed the connection (EOF)', by: 'peer' }));
    socket.on('close', () => this.#ended({ reason: 'the connection closed', by: 'peer' }));
    socket.on('error', (error) => this.#ended({ reason: error.message, by: 'error' }));
  }

  /**
   * Bytes received and sent on the connection inside TLS, frames whole, as Syncthing counts them
   * (lib/protocol/counting.go, over the TLS connection). A dialed connection's socket counts none of
   * what it reads into its own buffer, so they are counted here.
   */
  get inBytes(): number {
    return this.#inBytes;
  }

  get outBytes(): number {
    return this.#outBytes;
  }

  get ended(): SessionEnd | undefined {
    return this.#end;
  }

  onEnd(listener: (end: SessionEnd) => void): void {
    if (this.#end) listener(this.#end);
    else this.#onEnd.push(listener);
  }

  /** Sends ours and resolves with the peer's Hello; rejects when the peer sends none in time. */
  exchangeHello(ours: HelloFields): Promise<Hello> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => this.close(`no Hello within ${this.#times.helloTimeoutMs / 1000} s`, false),
        this.#times.helloTimeoutMs,
      );
      this.#hello = (hello) => {
        clearTimeout(timer);
        resolve(hello);
      };
      this.onEnd((end) => {
        clearTimeout(timer);
        reject(new Error(end.reason));
      });
      this.#write(encodeHello(ours));
    });
  }

  /**
   * From now on messages go to `onMessage`, one at a time: one that answers a promise is handled
   * before the next is read; a Response to one of this session's requests settles it instead. Until
   * this is called, nothing after the Hello is read (a device not yet known to be configured has
   * nothing decoded), and the keep-alive runs from here. The first message must be a ClusterConfig,
   * as Syncthing requires. `peer` names the device in its requests' errors.
   */
  start(onMessage: MessageHandler, compression: Compression, peer?: string): void {
    if (peer !== undefined) this.#peer = peer;
    this.#compression = compression;
    this.#onMessage = onMessage;
    this.#timer = setInterval(() => this.#keepAlive(), this.#times.pingEveryMs / 2);
    this.#timer.unref();
    this.#release('start');
  }

  send(message: BepMessage, written?: () => void): void {
    if (this.#end) return;
    const bytes = encodeMessage(message, this.#compression);
    this.#write(bytes, message.kind === 'Response' && bytes.length >= WRITE_ALONE, written);
  }

  /**
   * Asks the peer for a block; resolves with its data (unchecked: the caller checks the hash), rejects
   * with a RequestError when the peer answers an error or the session ends first.
   */
  request(request: BlockRequest): Promise<Uint8Array> {
    if (this.#end) return Promise.reject(this.#endedError(this.#end));
    const id = (this.#nextRequest = (this.#nextRequest + 1) & 0x7fffffff);
    return new Promise((resolve, reject) => {
      this.#requests.set(id, { resolve, reject });
      this.send({ kind: 'Request', body: create(RequestSchema, { ...request, id }) });
    });
  }

  /**
   * Answers a Request with the Response `produce` makes; its `size` bytes count as in flight on this
   * connection from then until written. Past MAX_ANSWERING_BYTES it waits its turn (nothing of it is
   * read meanwhile), and past MAX_WAITING_REQUESTS waiting the connection is not read.
   */
  answer(size: number, produce: () => Promise<Response>): void {
    if (this.#end) return;
    if (this.#answering > 0 && this.#answering + size > MAX_ANSWERING_BYTES) {
      this.#waitingAnswers.push({ size, produce });
      if (this.#waitingAnswers.length > MAX_WAITING_REQUESTS) this.#hold('requests');
      return;
    }
    this.#answering += size;
    const done = () => {
      this.#answering -= size;
      this.#nextAnswers();
    };
    produce().then(
      (body) => (this.#end ? done() : this.send({ kind: 'Response', body }, done)),
      (error: Error) => {
        done();
        this.close(`answering a request failed: ${error.message}`);
      },
    );
  }

  #nextAnswers(): void {
    const waiting = this.#waitingAnswers;
    while (!this.#end && waiting.length > 0) {
      const next = waiting[0] as (typeof waiting)[number];
      if (this.#answering > 0 && this.#answering + next.size > MAX_ANSWERING_BYTES) break;
      waiting.shift();
      this.answer(next.size, next.produce);
    }
    if (waiting.length <= MAX_WAITING_REQUESTS / 2) this.#release('requests');
  }

  /** Bytes of answers to Requests in flight (asked for, not yet written). */
  get answering(): number {
    return this.#answering;
  }

  /**
   * Ends the session: with a Close message carrying the reason when `tell` (Syncthing sends none to a
   * device it refuses), then the connection.
   */
  close(reason: string, tell = true): void {
    if (this.#end) return;
    // What still waits for the socket is not sent: the Close goes after what was.
    this.#waitingAnswers = [];
    const unsent = [...this.#waiting, ...this.#waitingBulk];
    this.#waiting = [];
    this.#waitingBulk = [];
    for (const bytes of unsent) this.#afterWrite.get(bytes)?.();
    for (const frame of this.#delayed.splice(0)) frame.written?.();
    if (tell && this.#onMessage)
      this.#put(encodeMessage({ kind: 'Close', body: create(CloseSchema, { reason }) }));
    this.#ended({ reason, by: 'us' });
    this.socket.end();
    // A peer that does not close its side in time has its connection cut.
    setTimeout(() => this.socket.destroy(), 2000).unref();
  }

  /** Keeps the connection's bytes, both ways, to the bandwidth limits from now on. */
  limit(limits: ConnectionLimits): void {
    this.#limits = limits;
  }

  // A frame waits its turn under the send limit (in order, behind those already waiting), then is
  // written as any other.
  #write(bytes: Buffer, bulk = false, written?: () => void): void {
    const wait = this.#limits?.send(bytes.length) ?? 0;
    if (wait > 0 || this.#delayed.length > 0) {
      this.#delayed.push({ bytes, bulk, written, at: performance.now() + wait });
      this.#sendLater();
      return;
    }
    this.#writeNow(bytes, bulk, written);
  }

  #sendLater(): void {
    const first = this.#delayed[0];
    if (this.#delayTimer || !first) return;
    this.#delayTimer = setTimeout(
      () => {
        this.#delayTimer = undefined;
        const now = performance.now();
        while (this.#delayed.length > 0 && (this.#delayed[0]?.at ?? Infinity) <= now && !this.#end) {
          const next = this.#delayed.shift() as DelayedFrame;
          this.#writeNow(next.bytes, next.bulk, next.written);
        }
        this.#sendLater();
      },
      Math.max(0, first.at - performance.now()),
    );
  }

  #writeNow(bytes: Buffer, bulk: boolean, written?: () => void): void {
    this.#lastWrite = Date.now();
    // While the socket is backed up, frames wait here rather than in its buffer: Node writes what its
    // buffer holds in one writev, for which TLS first copies it all into one new buffer (serving a
    // large file, about 100 ms of the thread per 300 MiB with the page faults of those buffers).
    // Large Responses wait behind everything else. A device pulling a large file keeps up to 32 MiB of
    // its blocks asked for (Syncthing's pullerMaxPendingKiB), and the Response to a small file's
    // Request waited behind all of them, 14 to 28 MB in the sync bench, when it could go at once:
    // Responses carry the ID of their Request and may come in any order (Syncthing answers each in
    // a goroutine of its own), and every other message keeps its order.
    const waiting = this.#waiting.length + this.#waitingBulk.length;
    if (waiting > 0 || this.socket.writableNeedDrain) {
      (bulk ? this.#waitingBulk : this.#waiting).push(bytes);
      if (written) this.#afterWrite.set(bytes, written);
      if (waiting === 0) this.socket.once('drain', () => this.#drained());
      return;
    }
    this.#put(bytes, written);
  }

  #drained(): void {
    const waiting = this.#waiting;
    const bulk = this.#waitingBulk;
    while (!this.socket.writableNeedDrain) {
      const next = waiting.length > 0 ? waiting.shift() : bulk.shift();
      if (!next) return;
      this.#put(next, this.#afterWrite.get(next));
    }
    if (waiting.length > 0 || bulk.length > 0) this.socket.once('drain', () => this.#drained());
  }

  #put(bytes: Buffer, written?: () => void): void {
    this.#outBytes += bytes.length;
    // Small messages sent in one pass of the event loop (a puller's Requests, small Responses) go out
    // in one write at its end (setImmediate: after every read and thread message of the pass, where
    // the end of the tick gathered only those of one): one encryption and one system call, where each
    // cost its own. A large one goes out by itself, after them: written together, Node would first
    // copy them all into one buffer.
    const socket = this.socket;
    if (bytes.length >= WRITE_ALONE) {
      if (socket.writableCorked) socket.uncork();
    } else if (!socket.writableCorked) {
      socket.cork();
      setImmediate(() => {
        if (socket.writableCorked) socket.uncork();
      });
    }
    // A Response's frame is reused once written, and only then.
    const reusable = isReusable(bytes);
    if (reusable || written) {
      this.socket.write(bytes, () => {
        if (reusable) giveBack(bytes);
        written?.();
      });
    } else this.socket.write(bytes);
  }

  #received(chunk: Buffer, transient: boolean): void {
    if (this.#end) return;
    this.#inBytes += chunk.length;
    this.#lastRead = Date.now();
    const wait = this.#limits?.receive(chunk.length) ?? 0;
    if (wait > 0) this.#pauseReading(wait);
    this.#reader.push(chunk, transient);
    try {
      if (this.#holds.size > 0 && this.#reader.buffered > MAX_HELD_BYTES) {
        throw new ProtocolError(`more than ${MAX_HELD_BYTES} bytes sent while the connection was not read`);
      }
      this.#readFrames();
    } finally {
      if (transient) this.#reader.release();
    }
  }

  // Reads and handles frames while nothing holds the reading: the Hello, then (once started) messages.
  #readFrames(): void {
    try {
      while (!this.#end && (!this.#helloRead || this.#holds.size === 0)) {
        const frame = this.#reader.next();
        if (!frame) return;
        if (frame.kind === 'hello') {
          this.#helloRead = true;
          if (!this.#onMessage) this.#hold('start');
          this.#hello?.(frame.hello);
        } else this.#deliver(frame.message);
      }
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      this.close(`protocol error: ${error.message}`, this.#onMessage !== undefined);
    }
  }

  // The receive limit: what came is read, and the connection is not read again for `ms` (as
  // Syncthing's limited reader waits after each read).
  #pauseReading(ms: number): void {
    const until = performance.now() + ms;
    if (this.#readPause && this.#readPause.until >= until) return;
    if (this.#readPause) clearTimeout(this.#readPause.timer);
    else this.#hold('bandwidth');
    const timer = setTimeout(() => {
      this.#readPause = undefined;
      this.#release('bandwidth');
    }, ms);
    this.#readPause = { timer, until };
  }

  #hold(reason: Hold): void {
    if (this.#holds.size === 0) this.socket.pause();
    this.#holds.add(reason);
  }

  #release(reason: Hold): void {
    if (!this.#holds.delete(reason) || this.#holds.size > 0 || this.#end) return;
    this.socket.resume();
    // What came before the hold is read now.
    this.#readFrames();
  }

  #deliver(message: BepMessage): void {
    if (this.#first && message.kind !== 'ClusterConfig' && message.kind !== 'Close') {
      this.close(`protocol error: the first message was ${message.kind}, not ClusterConfig`);
      return;
    }
    this.#first = false;
    if (message.kind === 'Close') {
      this.#ended({ reason: `closed by the peer: ${message.body.reason}`, by: 'peer' });
      this.socket.end();
      return;
    }
    if (message.kind === 'Response' && this.#settled(message.body)) return;
    const handled = this.#onMessage?.(message);
    if (!handled) return;
    this.#hold('handling');
    handled.then(
      () => this.#release('handling'),
      (error: Error) => this.close(`handling a ${message.kind} failed: ${error.message}`),
    );
  }

  // A Response settles the request it answers; one that answers none goes to the message handler.
  #settled(response: Response): boolean {
    const waiting = this.#requests.get(response.id);
    if (!waiting) return false;
    this.#requests.delete(response.id);
    const { code, data } = response;
    if (code === ErrorCode.NO_ERROR) waiting.resolve(data);
    else waiting.reject(new RequestError(`${this.#peer} answered ${ErrorCode[code] ?? code}`, code));
    return true;
  }

  #keepAlive(): void {
    const now = Date.now();
    if (now - this.#lastRead > this.#times.receiveTimeoutMs) {
      this.close(`nothing received for ${Math.round((now - this.#lastRead) / 1000)} s`);
    } else if (now - this.#lastWrite >= this.#times.pingEveryMs / 2) {
      this.send({ kind: 'Ping', body: create(PingSchema) });
    }
  }

  #ended(end: SessionEnd): void {
    if (this.#end) return;
    this.#end = end;
    clearInterval(this.#timer);
    clearTimeout(this.#delayTimer);
    if (this.#readPause) clearTimeout(this.#readPause.timer);
    for (const frame of this.#delayed.splice(0)) frame.written?.();
    for (const waiting of this.#requests.values()) waiting.reject(this.#endedError(end));
    this.#requests.clear();
    for (const listener of this.#onEnd.splice(0)) listener(end);
  }

  // What a request gets when the session ends before its Response, or was asked of an ended one.
  #endedError(end: SessionEnd): RequestError {
    return new RequestError(`the connection to ${this.#peer} ended: ${end.reason}`, ErrorCode.GENERIC);
  }
}

// A message this large is written by itself rather than gathered with others (see #write).
const WRITE_ALONE = 16 * 1024;
