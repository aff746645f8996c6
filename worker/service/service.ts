/** What a worker holds while it holds the service; `close` lets it all go. */
export interface Held {
  close(): Promise<void>;
}

/**
 * What this worker holds exclusively, and one worker at a time: the index database, the scanner and
 * the folders (see open-service.ts); peer connections and the discovery socket come later. The
 * supervisor tells the worker to acquire it once its predecessor has released it, and to release it
 * before the next one acquires it (see supervisor/service-handover.ts).
 */
export class Service<T extends Held = Held> {
  readonly #open: () => Promise<T>;
  #current: T | undefined;
  readonly #waiting = new Set<() => void>();
  /** For tests: what acquiring and releasing do besides, so that one can fail or never end. */
  hooks: ServiceHooks = {};

  constructor(open: () => Promise<T>) {
    this.#open = open;
  }

  get held(): boolean {
    return this.#current !== undefined;
  }

  /** What is held, while it is. */
  get current(): T | undefined {
    return this.#current;
  }

  async acquire(): Promise<void> {
    if (this.#current) return;
    await this.hooks.beforeAcquire?.();
    this.#current = await this.#open();
    for (const wake of this.#waiting) wake();
    this.#waiting.clear();
  }

  /**
   * True once the service is held; false after `ms` without it, or once this worker stops waiting
   * for it (it is stopping). See held-model.ts.
   */
  whenHeld(ms: number): Promise<boolean> {
    if (this.#current) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(this.#current !== undefined);
      };
      const timer = setTimeout(() => {
        this.#waiting.delete(wake);
        resolve(false);
      }, ms);
      this.#waiting.add(wake);
    });
  }

  /** Wakes every request waiting for the service: a stopping worker answers them without it. */
  stopWaiting(): void {
    for (const wake of this.#waiting) wake();
    this.#waiting.clear();
  }

  async release(): Promise<void> {
    const current = this.#current;
    if (!current) return;
    await this.hooks.beforeRelease?.();
    this.#current = undefined;
    await current.close();
  }
}

export interface ServiceHooks {
  beforeAcquire?: () => Promise<void>;
  beforeRelease?: () => Promise<void>;
}
