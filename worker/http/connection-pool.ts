import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface DrainOptions {
  /** How long idle keep-alive connections get to send one more request, answered with Connection: close. */
  idleGraceMs: number;
  /** Past this, the connections still open are cut. */
  timeoutMs: number;
}

export interface DrainResult {
  /** Connections still open when the timeout passed, and cut. */
  cut: number;
}

/**
 * The connections this worker serves. The worker never listens: the supervisor accepts and hands each
 * connection over, and the pool feeds it to the HTTP server and tells when the last one has ended.
 *
 * At most `maxConnections` are served. When a new one would exceed that, the oldest connection that
 * has not yet sent a request with the API key makes room: otherwise anyone could fill the pool with
 * idle connections, reopened as soon as they close, and lock the key holder (and health checks) out.
 * A connection proven by the key is never evicted; only when all are, is the new one refused.
 */
export class ConnectionPool {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  /** Connections that have sent no request with the key, oldest first. */
  readonly #unproven = new Set<Socket>();
  #onEmpty: (() => void) | undefined;

  readonly #maxConnections: number;
  readonly #onEvicted: (count: number) => void;
  #evicted = 0;
  #evictedReport: NodeJS.Timeout | undefined;

  /** `onEvicted` hears, at most every 10 s, how many connections were closed to stay within the limit. */
  constructor(server: Server, maxConnections = Infinity, onEvicted: (count: number) => void = () => {}) {
    this.#server = server;
    this.#maxConnections = maxConnections;
    this.#onEvicted = onEvicted;
    // Node's HTTP server starts tracking connections (idle detection, header and request time-outs)
    // on 'listening', which a server fed from outside never emits by itself.
    server.emit('listening');
  }

  get size(): number {
    return this.#sockets.size;
  }

  serve(socket: Socket): void {
    if (this.#sockets.size >= this.#maxConnections) {
      const oldest = this.#unproven.values().next().value;
      this.#countEvicted();
      if (!oldest) {
        socket.destroy();
        return;
      }
      this.#forget(oldest);
      oldest.destroy();
    }
    // Node's HTTP server turns Nagle's algorithm off on the connections it accepts itself; a handed-over
    // connection would keep the supervisor's default. Set it so that both behave alike.
    socket.setNoDelay(true);
    this.#sockets.add(socket);
    this.#unproven.add(socket);
    socket.once('close', () => {
      if (!this.#forget(socket)) return;
      if (this.#sockets.size === 0) this.#onEmpty?.();
    });
    this.#server.emit('connection', socket);
  }

  /** The connection sent a request with the API key: it is never evicted to make room. */
  prove(socket: Socket): void {
    // With TLS the request's socket wraps the one handed over.
    this.#unproven.delete((socket as Socket & { _parent?: Socket })._parent ?? socket);
  }

  /** Resolves once every connection has ended: in-flight requests are answered, then connections close. */
  drain({ idleGraceMs, timeoutMs }: DrainOptions): Promise<DrainResult> {
    this.#reportEvicted();
    return new Promise((resolve) => {
      if (this.#sockets.size === 0) return resolve({ cut: 0 });
      // A connection becomes idle once its last response is out: sweep often so that none lingers.
      // Each sweep waits for the reads of the event loop's turn: a turn runs its timers before its
      // reads, so a worker kept busy past a timer (it runs at low priority) would close a connection
      // whose next request had arrived unread, and closing with unread input resets it.
      let pending: NodeJS.Immediate | undefined;
      const sweep = () => {
        pending ??= setImmediate(() => {
          pending = undefined;
          this.#server.closeIdleConnections();
        });
      };
      let sweeper: NodeJS.Timeout | undefined;
      const grace = setTimeout(() => {
        sweep();
        sweeper = setInterval(sweep, SWEEP_INTERVAL_MS);
      }, idleGraceMs);
      const deadline = setTimeout(() => {
        const cut = this.#sockets.size;
        for (const socket of this.#sockets) socket.destroy();
        finish(cut);
      }, timeoutMs);
      const finish = (cut: number) => {
        clearTimeout(grace);
        clearTimeout(deadline);
        clearInterval(sweeper);
        clearImmediate(pending);
        this.#onEmpty = undefined;
        resolve({ cut });
      };
      this.#onEmpty = () => finish(0);
    });
  }

  #forget(socket: Socket): boolean {
    this.#unproven.delete(socket);
    return this.#sockets.delete(socket);
  }

  #countEvicted(): void {
    this.#evicted += 1;
    this.#evictedReport ??= setTimeout(() => this.#reportEvicted(), REPORT_EVERY_MS).unref();
  }

  #reportEvicted(): void {
    clearTimeout(this.#evictedReport);
    this.#evictedReport = undefined;
    if (this.#evicted > 0) this.#onEvicted(this.#evicted);
    this.#evicted = 0;
  }
}

const SWEEP_INTERVAL_MS = 25;
const REPORT_EVERY_MS = 10_000;
