/**
 * Time during which this process could run, in milliseconds. A step between two readings longer than
 * `maxStepMs` means the process was not scheduled (`docker pause`, a VM or laptop asleep, its own event
 * loop stalled): that step counts as `maxStepMs` only. Deadlines measured on it judge a worker only on
 * time it had to act in, so a whole service paused for a minute does not find its worker hung on resume.
 */
export class AwakeClock {
  readonly #maxStepMs: number;
  readonly #read: () => number;
  #last: number;
  #awake = 0;
  #ticker: NodeJS.Timeout | undefined;

  constructor(maxStepMs: number, read: () => number = () => performance.now()) {
    this.#maxStepMs = maxStepMs;
    this.#read = read;
    this.#last = read();
  }

  now(): number {
    const reading = this.#read();
    this.#awake += Math.min(Math.max(0, reading - this.#last), this.#maxStepMs);
    this.#last = reading;
    return this.#awake;
  }

  /** Reads the clock every `everyMs`, so that only a real gap in scheduling looks like one. */
  start(everyMs: number): void {
    this.#ticker ??= setInterval(() => this.now(), everyMs);
    this.#ticker.unref();
  }

  stop(): void {
    clearInterval(this.#ticker);
    this.#ticker = undefined;
  }

  /**
   * Runs `action` once `ms` of awake time have passed; returns a function that cancels it. A timer that
   * fires after a gap finds less awake time passed than it waited for, and waits for the rest.
   */
  deadline(ms: number, action: () => void): () => void {
    const due = this.now() + ms;
    let timer: NodeJS.Timeout;
    const check = () => {
      const left = due - this.now();
      if (left > 0) timer = setTimeout(check, Math.min(left, MAX_TIMER_MS));
      else action();
    };
    timer = setTimeout(check, Math.min(ms, MAX_TIMER_MS));
    return () => clearTimeout(timer);
  }
}

// Node's timers hold 32-bit signed milliseconds; a longer wait fires after 1 ms instead.
export const MAX_TIMER_MS = 2 ** 31 - 1;
