export interface CrashPolicyOptions {
  /** More crashes than this within windowMs and the supervisor gives up. */
  limit: number;
  windowMs: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** A worker that stayed up this long ends a run of consecutive crashes. */
  stableMs?: number;
}

export type CrashVerdict = { delayMs: number } | { giveUp: string };

/**
 * Decides, crash by crash, how long to wait before the next worker (a backoff that doubles with
 * consecutive crashes) and when to stop trying. Intentional restarts never reach it.
 */
export class CrashPolicy {
  readonly #options: Required<CrashPolicyOptions>;
  readonly #times: number[] = [];
  #consecutive = 0;

  constructor(options: CrashPolicyOptions) {
    this.#options = { baseDelayMs: 100, maxDelayMs: 10_000, stableMs: 30_000, ...options };
  }

  /** Records a crash at `now` of a worker that had served for `upMs` (0 if it never became ready). */
  record(now: number, upMs: number): CrashVerdict {
    const { limit, windowMs, baseDelayMs, maxDelayMs, stableMs } = this.#options;
    this.#times.push(now);
    while (this.#times.length > 0 && (this.#times[0] as number) <= now - windowMs) this.#times.shift();
    if (this.#times.length > limit) {
      return { giveUp: `${this.#times.length} worker crashes within ${windowMs / 1000}s (limit ${limit})` };
    }
    this.#consecutive = upMs >= stableMs ? 1 : this.#consecutive + 1;
    return { delayMs: Math.min(baseDelayMs * 2 ** (this.#consecutive - 1), maxDelayMs) };
  }
}
