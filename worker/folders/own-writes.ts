/**
 * The names of a folder the service itself is writing now: what the file watcher reports of them is
 * its own doing, not a change to scan (Syncthing's watch aggregator skips the paths of items in
 * progress, lib/watchaggregator/aggregator.go). Only while each is written: an event the system
 * delivers later is scanned, and finds nothing changed; a user's change just after is not missed.
 */
export class OwnWrites {
  readonly #writing = new Set<string>();

  started(name: string): void {
    this.#writing.add(name);
  }

  finished(name: string): void {
    this.#writing.delete(name);
  }

  /** The pull is over, or stopped: nothing is being written. */
  ended(): void {
    this.#writing.clear();
  }

  isOwn(name: string): boolean {
    return this.#writing.has(name);
  }
}
