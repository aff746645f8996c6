/** How often the same message about the same thing is logged again while it goes on. */
export const REPEAT_EVERY_MS = 10 * 60_000;
// Things remembered at most: past this, a new one is logged only once per REPEAT_EVERY_MS, saying so.
const MAX_KEYS = 1000;

/*
 * Warnings that come back on a timer (an item a pull cannot bring, at every retry; a file a scan cannot
 * read, at every rescan; a device whose certificate is wrong, at every reconnection) logged once,
 * then again at most every REPEAT_EVERY_MS with how many times they came meanwhile: the log and the
 * recent errors keep what is new. A changed message about the same thing is news, logged at once.
 */
export class RateLimitedLog {
  readonly #everyMs: number;
  readonly #now: () => number;
  readonly #maxKeys: number;
  readonly #seen = new Map<string, { message: string; loggedAt: number; since: number }>();
  // When a thing past the limit was last logged, and how many were not since.
  #overflow = { loggedAt: Number.NEGATIVE_INFINITY, since: 0 };

  constructor(options: { everyMs?: number; now?: () => number; maxKeys?: number } = {}) {
    this.#everyMs = options.everyMs ?? REPEAT_EVERY_MS;
    this.#now = options.now ?? (() => performance.now());
    this.#maxKeys = options.maxKeys ?? MAX_KEYS;
  }

  /**
   * Whether to log `message` about `key` now: undefined to say nothing, else what to end the line with
   * (empty, or how many times it came since it was last logged).
   */
  note(key: string, message: string): string | undefined {
    const now = this.#now();
    const seen = this.#seen.get(key);
    this.#seen.delete(key);
    if (seen?.message === message && now - seen.loggedAt < this.#everyMs) {
      seen.since++;
      this.#seen.set(key, seen);
      return undefined;
    }
    if (!seen && this.#seen.size >= this.#maxKeys) return this.#overflowed(now);
    this.#seen.set(key, { message, loggedAt: now, since: 0 });
    if (seen?.message !== message || seen.since === 0) return '';
    return ` (repeated ${seen.since} times in the last ${minutes(now - seen.loggedAt)})`;
  }

  // A thing past the limit: one logged per period, with how many were not; the rest not one by one.
  #overflowed(now: number): string | undefined {
    if (now - this.#overflow.loggedAt < this.#everyMs) {
      this.#overflow.since++;
      return undefined;
    }
    const skipped = this.#overflow.since;
    this.#overflow = { loggedAt: now, since: 0 };
    return ` (more than ${this.#maxKeys} things are being reported: one a ${minutes(this.#everyMs)} is logged${skipped > 0 ? `, ${skipped} others were not` : ''})`;
  }

  /** `key`'s trouble is over: whether a message about it had been logged (then saying so is news). */
  cleared(key: string): boolean {
    return this.#seen.delete(key);
  }

  /** The things a message is remembered about. */
  keys(): string[] {
    return [...this.#seen.keys()];
  }
}

function minutes(ms: number): string {
  const whole = Math.max(1, Math.round(ms / 60_000));
  return whole === 1 ? '1 min' : `${whole} min`;
}
