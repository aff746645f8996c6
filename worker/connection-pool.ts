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
 */
export class ConnectionPool {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #onEmpty: (() => void) | undefined;

  readonly #maxConnections: number;
  readonly #onRefused: (count: number) => void;
  #refused = 0;
  #refusedReport: NodeJS.Timeout | undefined;

  /** `onRefused` hears, at most every 10 s, how many connections over `maxConnections` were closed. */
  constructor(server: Server, maxConnections = Infinity, onRefused: (count: number) => void = () => {}) {
    this.#server = server;
    this.#maxConnections = maxConnections;
    this.#onRefused = onRefused;
    // Node's HTTP server starts tracking connections (idle detection, header and request time-outs)
    // on 'listening', which a server fed from outside never emits by itself.
    server.emit('listening');
  }

  get size(): number {
    return this.#sockets.size;
  }

  serve(socket: Socket): void {
    if (this.#sockets.size >= this.#maxConnections) {
      socket.destroy();
      this.#refused += 1;
      if (this.#refusedReport === undefined) {
        this.#refusedReport = setTimeout(() => {
          this.#onRefused(this.#refused);
          this.#refused = 0;
          this.#refusedReport = undefined;
        }, REFUSED_REPORT_MS).unref();
      }
      return;
    }
    // Node's HTTP server turns Nagle's algorithm off on the connections it accepts itself; a handed-over
    // connection would keep the supervisor's default. Set it so that both behave alike.
    socket.setNoDelay(true);
    this.#sockets.add(socket);
    socket.once('close', () => {
      this.#sockets.delete(socket);
      if (this.#sockets.size === 0) this.#onEmpty?.();
    });
    this.#server.emit('connection', socket);
  }

  /** Resolves once every connection has ended: in-flight requests are answered, then connections close. */
  drain({ idleGraceMs, timeoutMs }: DrainOptions): Promise<DrainResult> {
    return new Promise((resolve) => {
      if (this.#sockets.size === 0) return resolve({ cut: 0 });
      // A connection becomes idle once its last response is out: sweep often so that none lingers.
      const sweep = () => this.#server.closeIdleConnections();
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
        this.#onEmpty = undefined;
        resolve({ cut });
      };
      this.#onEmpty = () => finish(0);
    });
  }
}

const SWEEP_INTERVAL_MS = 25;
const REFUSED_REPORT_MS = 10_000;
