import type { Socket } from 'node:net';
import { Requests } from '../shared/ipc/requests.ts';
import type { ListenerName } from '../shared/ipc/protocol.ts';
import type { AwakeClock } from './awake-clock.ts';
import type { WorkerHandle } from './worker-handle.ts';

interface Handed {
  socket: Socket;
  /** When it was handed over, in awake time. */
  at: number;
  seq: number;
}

/**
 * The connections of one listener on their way to a worker, as Node's cluster module hands them round
 * robin: each is sent over IPC with the socket as its handle, and the supervisor keeps its own copy
 * until the worker acknowledges it, so that a worker dying with it unread loses nothing: the
 * connection is taken back and goes to the next worker. While no worker serves, connections are held.
 */
export class Handoff {
  readonly #clock: AwakeClock;
  readonly #maxHeld: number;
  #target: WorkerHandle | undefined;
  readonly #held: Socket[] = [];
  readonly #unacknowledged = new Map<WorkerHandle, Requests<Handed>>();
  #closed = false;
  readonly #listener: ListenerName;

  /** `maxHeld`: connections held at most while no worker serves; past it the oldest is closed. */
  constructor(listener: ListenerName, clock: AwakeClock, maxHeld: number) {
    this.#listener = listener;
    this.#clock = clock;
    this.#maxHeld = maxHeld;
  }

  /** A connection accepted on the listener: to the serving worker, or held until one serves. */
  accept(socket: Socket): void {
    if (this.#closed) {
      socket.destroy();
    } else if (this.#target) {
      this.#handOver(this.#target, socket);
    } else {
      this.#held.push(socket);
      // The oldest goes first: the newest is the likeliest to be a client still waiting.
      if (this.#held.length > this.#maxHeld) this.#held.shift()?.destroy();
    }
  }

  /** From now on connections go to `worker`, first those held; none: they are held. */
  serveWith(worker: WorkerHandle | undefined): void {
    this.#target = worker;
    if (worker) for (const socket of this.#held.splice(0)) this.#handOver(worker, socket);
  }

  /** The worker holds the connection now: the supervisor's copy can go. */
  acknowledged(worker: WorkerHandle, seq: number): void {
    // destroy() closes only this process's copy of the descriptor; end() would shut the connection
    // down for the worker too.
    this.#unacknowledged.get(worker)?.settle(seq)?.socket.destroy();
  }

  /**
   * Connections handed to `worker` before `before` (awake time) and still unacknowledged, when the
   * worker has answered a message sent after them: the channel delivers in order, so their handles
   * never arrived (Node drops a handle the receiver could not take, such as past its open-file limit).
   * They are closed, not left open for ever; returns how many.
   */
  dropLost(worker: WorkerHandle, before: number): number {
    const handed = this.#unacknowledged.get(worker);
    let lost = 0;
    for (let oldest = handed?.oldest(); oldest && oldest.at < before; oldest = handed?.oldest()) {
      handed?.settle(oldest.seq);
      oldest.socket.destroy();
      lost += 1;
    }
    return lost;
  }

  /** A worker has exited: the connections it never took are still whole and go to the next one. */
  takeBack(worker: WorkerHandle): void {
    if (this.#target === worker) this.#target = undefined;
    const handed = this.#unacknowledged.get(worker);
    this.#unacknowledged.delete(worker);
    for (const { socket } of handed?.drain() ?? []) this.accept(socket);
  }

  /** Stops for good: held connections are closed, and any accepted later too. */
  close(): void {
    this.#closed = true;
    this.#target = undefined;
    for (const socket of this.#held.splice(0)) socket.destroy();
  }

  #handOver(worker: WorkerHandle, socket: Socket): void {
    let handed = this.#unacknowledged.get(worker);
    if (!handed) this.#unacknowledged.set(worker, (handed = new Requests()));
    const at = this.#clock.now();
    const pending: Handed = { socket, at, seq: 0 };
    pending.seq = handed.open(pending);
    worker.send({ type: 'syncd:connection', seq: pending.seq, listener: this.#listener }, socket, () => {
      // The channel closed under the connection; the worker's exit hands it on.
    });
  }
}
