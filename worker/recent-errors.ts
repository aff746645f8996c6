import type { RecentError } from '../shared/protocol.ts';

export const MAX_RECENT_ERRORS = 1000;

/** The recent errors the service holds, oldest first, keeping only the newest `limit`. */
export class RecentErrors {
  readonly #errors: RecentError[] = [];
  readonly #limit: number;

  constructor(initial: readonly RecentError[] = [], limit = MAX_RECENT_ERRORS) {
    this.#limit = limit;
    for (const error of initial) this.add(error);
  }

  add(error: RecentError): void {
    this.#errors.push(error);
    if (this.#errors.length > this.#limit) this.#errors.splice(0, this.#errors.length - this.#limit);
  }

  list(): RecentError[] {
    return [...this.#errors];
  }

  clear(): void {
    this.#errors.length = 0;
  }
}
