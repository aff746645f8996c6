import { availableParallelism } from 'node:os';

/**
 * Syncthing's folderIOLimiter (lib/model/model.go, lib/util/semaphore.go): how many folders scan, pull
 * or clean their versions at once, all folders together. A capacity of 0 is no limit; a new capacity
 * holds from the next turn taken, and a smaller one lets no one in until enough turns are given back.
 */
export class IoLimiter {
  #capacity: number;
  #held = 0;
  readonly #waiting: Array<() => boolean> = [];

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  get capacity(): number {
    return this.#capacity;
  }

  /** A new capacity (options.maxFolderConcurrency changed): whoever it makes room for goes on at once. */
  set capacity(capacity: number) {
    this.#capacity = capacity;
    this.#wake();
  }

  /** How many turns are taken now. */
  get held(): number {
    return this.#held;
  }

  /** How many wait for a turn. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Resolves with the function that gives the turn back once it is this caller's; rejects with the
   * signal's reason if it is aborted first.
   */
  take(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const at = this.#waiting.indexOf(turn);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(signal?.reason as Error);
      };
      const turn = () => {
        if (!this.#free()) return false;
        signal?.removeEventListener('abort', onAbort);
        this.#held++;
        let given = false;
        resolve(() => {
          if (given) return;
          given = true;
          this.#held--;
          this.#wake();
        });
        return true;
      };
      if (this.#waiting.length === 0 && turn()) return;
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(turn);
    });
  }

  #free(): boolean {
    return this.#capacity <= 0 || this.#held < this.#capacity;
  }

  // Turns go in the order they were asked for.
  #wake(): void {
    while (this.#waiting.length > 0 && this.#free()) this.#waiting.shift()?.();
  }
}

/**
 * options.maxFolderConcurrency as Syncthing reads it (lib/config/optionsconfiguration.go
 * MaxFolderConcurrency): a positive number as it is, a negative one no limit (0), and 0 the number of
 * CPUs.
 */
export function folderConcurrency(maxFolderConcurrency: number): number {
  if (maxFolderConcurrency > 0) return maxFolderConcurrency;
  if (maxFolderConcurrency < 0) return 0;
  return availableParallelism();
}
