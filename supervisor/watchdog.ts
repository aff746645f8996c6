import { Requests } from '../shared/ipc/requests.ts';
import type { AwakeClock } from './awake-clock.ts';

export type Beat = { seq: number } | { hungForMs: number };

/**
 * Heartbeats of the serving worker. Each beat is a numbered question the worker answers over IPC; a
 * worker is hung when a question has gone unanswered for longer than the timeout of awake time, that
 * is, time during which both processes could run (see AwakeClock).
 */
export class Watchdog {
  readonly #clock: AwakeClock;
  readonly #timeoutMs: number;
  /** When each unanswered heartbeat was sent, in awake time. */
  readonly #unanswered = new Requests<number>();

  constructor(clock: AwakeClock, timeoutMs: number) {
    this.#clock = clock;
    this.#timeoutMs = timeoutMs;
  }

  /** The next heartbeat to send, or, when the oldest one has waited past the timeout, how long it has. */
  beat(): Beat {
    const now = this.#clock.now();
    const oldest = this.#unanswered.oldest();
    if (oldest !== undefined && now - oldest > this.#timeoutMs)
      return { hungForMs: Math.round(now - oldest) };
    return { seq: this.#unanswered.open(now) };
  }

  /** Records an answer; returns when that heartbeat was sent (awake time), or undefined if unknown. */
  answered(seq: number): number | undefined {
    return this.#unanswered.settleUpTo(seq).answered;
  }
}
