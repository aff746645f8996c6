/**
 * Bytes in memory at once, shared by whoever takes from it: a taker waits while the others hold too
 * much (one taker alone always gets what it asks, so that a block larger than the budget still goes).
 */
export class ByteBudget {
  readonly #limit: number;
  #held = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(limit: number) {
    this.#limit = limit;
  }

  async take(bytes: number): Promise<void> {
    while (this.#held > 0 && this.#held + bytes > this.#limit) {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
    this.#held += bytes;
  }

  give(bytes: number): void {
    this.#held -= bytes;
    // Every waiter looks again: several small ones may fit where one large one left.
    for (const wake of this.#waiting.splice(0)) wake();
  }
}
