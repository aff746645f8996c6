/**
 * Numbers the requests of one kind sent over an IPC channel and matches each answer to its request, as
 * Node's cluster module does with seq and ack: a request-like message carries `seq`, and its answer the
 * same `seq`. Connections, heartbeats and the service's release and acquire all go through it.
 */
export class Requests<T> {
  #seq = 0;
  readonly #pending = new Map<number, T>();

  /** Records a request about to be sent; returns its `seq`. */
  open(value: T): number {
    this.#seq += 1;
    this.#pending.set(this.#seq, value);
    return this.#seq;
  }

  /** The request answered by `seq`, now settled; undefined if unknown or settled already. */
  settle(seq: number): T | undefined {
    const value = this.#pending.get(seq);
    this.#pending.delete(seq);
    return value;
  }

  /**
   * Settles `seq` and every older request: the channel delivers in order, so an answer means every
   * question sent before it has been read. Returns the older ones, oldest first, and the answered one.
   */
  settleUpTo(seq: number): { older: T[]; answered: T | undefined } {
    const older: T[] = [];
    for (const [pending, value] of this.#pending) {
      if (pending >= seq) break;
      older.push(value);
      this.#pending.delete(pending);
    }
    return { older, answered: this.settle(seq) };
  }

  /** The oldest request still unanswered. */
  oldest(): T | undefined {
    return this.#pending.values().next().value;
  }

  /** Every request still unanswered, oldest first, settled at once. */
  drain(): T[] {
    const values = [...this.#pending.values()];
    this.#pending.clear();
    return values;
  }
}
