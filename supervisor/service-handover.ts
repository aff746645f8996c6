import type { Logger } from '../shared/logger.ts';
import { Requests } from '../shared/ipc/requests.ts';
import type { AwakeClock } from './awake-clock.ts';
import type { WorkerHandle } from './worker-handle.ts';

export interface HandoverOptions {
  clock: AwakeClock;
  logger: Logger;
  /** A worker asked to release that has not within this long is killed; its successor then acquires. */
  releaseTimeoutMs: number;
  /** Hears each change of holder: a worker, or none while the service changes hands. */
  onHolder: (worker: WorkerHandle | undefined) => void;
}

/** A release or an acquire asked for: which one is told by where it is kept. */
type Pending = { worker: WorkerHandle; cancel?: () => void };

// A failed acquire is tried again after this, doubling up to the maximum.
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 10_000;

/**
 * The service (what a worker holds exclusively: the index database, the scanner, peer connections, the
 * discovery socket) changes hands in two phases, so that two workers never hold it at once: the holder
 * is asked to release it, and only once it has (or has been killed for not doing so within the
 * timeout, or has exited) is its successor asked to acquire it. Between the two, nothing holds it: a
 * reset erases the index there. The successor is the newest worker that serves HTTP, given by `moveTo`.
 */
export class ServiceHandover {
  readonly #options: HandoverOptions;
  readonly #requests = new Requests<Pending>();
  #target: WorkerHandle | undefined;
  #holder: WorkerHandle | undefined;
  #releasing: Pending | undefined;
  #acquiring: Pending | undefined;
  #retry: { timer: NodeJS.Timeout | undefined; delayMs: number } = {
    timer: undefined,
    delayMs: RETRY_FIRST_MS,
  };
  /** Awake time since which nothing has held the service. */
  #freeSince: number;
  #stopped = false;

  constructor(options: HandoverOptions) {
    this.#options = options;
    this.#freeSince = options.clock.now();
  }

  get holder(): WorkerHandle | undefined {
    return this.#holder;
  }

  /** The worker that should hold the service from now on, or none. */
  moveTo(worker: WorkerHandle | undefined): void {
    this.#target = worker;
    this.#settle();
  }

  /** No more acquiring: the service is stopping, and each worker releases what it holds as it drains. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#retry.timer);
    this.#releasing?.cancel?.();
  }

  released(worker: WorkerHandle, seq: number): void {
    const pending = this.#requests.settle(seq);
    if (!pending || pending !== this.#releasing || pending.worker !== worker) return;
    pending.cancel?.();
    this.#releasing = undefined;
    this.#free(worker);
    this.#settle();
  }

  acquired(worker: WorkerHandle, seq: number): void {
    const pending = this.#requests.settle(seq);
    if (!pending || pending !== this.#acquiring || pending.worker !== worker) return;
    this.#acquiring = undefined;
    this.#holder = worker;
    this.#retry.delayMs = RETRY_FIRST_MS;
    const gapMs = Math.round(this.#options.clock.now() - this.#freeSince);
    this.#options.logger.info({ workerPid: worker.pid, gapMs }, 'service held');
    this.#options.onHolder(worker);
    this.#settle();
  }

  acquireFailed(worker: WorkerHandle, seq: number, error: string): void {
    const pending = this.#requests.settle(seq);
    if (!pending || pending !== this.#acquiring || pending.worker !== worker) return;
    this.#acquiring = undefined;
    const delayMs = this.#retry.delayMs;
    this.#retry.delayMs = Math.min(delayMs * 2, RETRY_MAX_MS);
    this.#options.logger.error(
      { workerPid: worker.pid, delayMs },
      `worker ${worker.pid} could not acquire the service: ${error}; trying again in ${delayMs}ms`,
    );
    this.#retry.timer = setTimeout(() => {
      this.#retry.timer = undefined;
      this.#settle();
    }, delayMs);
  }

  /** The worker is gone: whatever it held or was asked for is free. */
  exited(worker: WorkerHandle): void {
    if (this.#releasing?.worker === worker) {
      this.#releasing.cancel?.();
      this.#releasing = undefined;
    }
    if (this.#acquiring?.worker === worker) this.#acquiring = undefined;
    if (this.#holder === worker) this.#free(worker);
    if (this.#target === worker) this.#target = undefined;
    this.#settle();
  }

  #settle(): void {
    if (this.#stopped) return;
    const target = this.#target;
    // First the holder lets go; meanwhile nothing else moves.
    if (this.#holder && this.#holder !== target) {
      if (!this.#releasing) this.#release(this.#holder);
      return;
    }
    if (this.#releasing || this.#acquiring || this.#retry.timer || !target || this.#holder === target) return;
    this.#acquire(target);
  }

  #release(worker: WorkerHandle): void {
    // What goes to the holder (other devices' connections) waits here from now on: the holder is
    // letting go, and would only close it.
    this.#options.onHolder(undefined);
    const pending: Pending = { worker };
    this.#releasing = pending;
    const seq = this.#requests.open(pending);
    const { releaseTimeoutMs, clock, logger } = this.#options;
    pending.cancel = clock.deadline(releaseTimeoutMs, () => {
      logger.warn(
        { workerPid: worker.pid },
        `worker ${worker.pid} did not release the service within ${releaseTimeoutMs}ms; killing it`,
      );
      worker.kill('SIGKILL', `it did not release the service within ${releaseTimeoutMs}ms`);
    });
    worker.send({ type: 'syncd:release', seq });
  }

  #acquire(worker: WorkerHandle): void {
    const pending: Pending = { worker };
    this.#acquiring = pending;
    worker.send({ type: 'syncd:acquire', seq: this.#requests.open(pending) });
  }

  #free(worker: WorkerHandle): void {
    if (this.#holder !== worker) return;
    this.#holder = undefined;
    this.#freeSince = this.#options.clock.now();
    this.#options.onHolder(undefined);
  }
}
