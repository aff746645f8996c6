/**
 * The names of a folder the service itself is writing, or wrote a moment ago: what the file watcher
 * reports of them is its own doing, not a change to scan (Syncthing's watch aggregator skips the paths
 * of items in progress, lib/watchaggregator/aggregator.go). Kept a grace period after each is done,
 * for the events the system delivers late.
 */
export class OwnWrites {
  readonly #until = new Map<string, number>();
  readonly #graceMs: number;

  constructor(graceMs = 2000) {
    this.#graceMs = graceMs;
  }

  started(name: string): void {
    this.#until.set(name, Infinity);
  }

  finished(name: string): void {
    this.#until.set(name, Date.now() + this.#graceMs);
  }

  /** The writes have all ended (the pull is over, or stopped): each is done now, and the old ones go. */
  ended(): void {
    const now = Date.now();
    for (const [name, until] of this.#until) {
      if (until === Infinity) this.#until.set(name, now + this.#graceMs);
      else if (until < now) this.#until.delete(name);
    }
  }

  isOwn(name: string): boolean {
    const until = this.#until.get(name);
    if (until === undefined) return false;
    if (until >= Date.now()) return true;
    this.#until.delete(name);
    return false;
  }
}
