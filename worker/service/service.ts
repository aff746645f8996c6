/**
 * What this worker holds exclusively, and one worker at a time: the coming issues put the index
 * database, the scanner, peer connections and the discovery socket here. The supervisor tells the
 * worker to acquire it once its predecessor has released it, and to release it before the next one
 * acquires it (see supervisor/service-handover.ts). It holds nothing yet.
 */
export class Service {
  #held = false;
  /** For tests: what acquiring and releasing do besides, so that one can fail or never end. */
  hooks: ServiceHooks = {};

  get held(): boolean {
    return this.#held;
  }

  async acquire(): Promise<void> {
    if (this.#held) return;
    await this.hooks.beforeAcquire?.();
    this.#held = true;
  }

  async release(): Promise<void> {
    if (!this.#held) return;
    await this.hooks.beforeRelease?.();
    this.#held = false;
  }
}

export interface ServiceHooks {
  beforeAcquire?: () => Promise<void>;
  beforeRelease?: () => Promise<void>;
}
