/**
 * Whether blocks should be read through libuv's threads rather than at once on the worker's thread:
 * only when reads keep taking long, as from a disk (a seek takes 5 to 15 ms). Through libuv, a
 * block costs about 150 µs more of CPU time (serving 300 MiB and 2,000 small files, 400 to 500 ms
 * more of the worker's), so a read must be really slow to count, and one alone says little: on a
 * machine whose cores are busy (a receiving Syncthing beside us), the thread is sometimes preempted
 * in the middle of a read from the page cache, and on a virtual machine whose host takes back its
 * free memory, a 256 KiB read from the cache took 1.5 to 3.5 ms now and then in the sync bench. A
 * disk makes every uncached read slow, so a few within a second are enough to tell.
 */
export class SlowReads {
  readonly #limitMs: number;
  readonly #count: number;
  readonly #windowMs: number;
  readonly #forMs: number;
  /** When the recent slow reads ended, oldest first. */
  #recent: number[] = [];
  #until = 0;

  constructor(options: { limitMs?: number; count?: number; windowMs?: number; forMs?: number } = {}) {
    this.#limitMs = options.limitMs ?? 5;
    this.#count = options.count ?? 3;
    this.#windowMs = options.windowMs ?? 1000;
    this.#forMs = options.forMs ?? 10_000;
  }

  /** Whether reads go through libuv's threads at `now` (ms). */
  throughThreads(now: number): boolean {
    return now < this.#until;
  }

  /** A read at once that took `ms`, ending at `now`. */
  record(ms: number, now: number): void {
    if (ms <= this.#limitMs) return;
    this.#recent.push(now);
    while (this.#recent.length > 0 && (this.#recent[0] as number) <= now - this.#windowMs)
      this.#recent.shift();
    if (this.#recent.length < this.#count) return;
    this.#recent = [];
    this.#until = now + this.#forMs;
  }
}
