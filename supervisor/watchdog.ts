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
  /** Unanswered heartbeats: seq → when it was sent, in awake time. */
  readonly #unanswered = new Map<number, number>();
  #seq = 0;

  constructor(clock: AwakeClock, timeoutMs: number) {
    this.#clock = clock;
    this.#timeoutMs = timeoutMs;
  }

  /** The next heartbeat to send, or, when the oldest one has waited past the timeout, how long it has. */
  beat(): Beat {
    const now = this.#clock.now();
    const oldest = this.#unanswered.values().next().value;
    if (oldest !== undefined && now - oldest > this.#timeoutMs)
      return { hungForMs: Math.round(now - oldest) };
    this.#seq += 1;
    this.#unanswered.set(this.#seq, now);
    return { seq: this.#seq };
  }

  /** Records an answer; returns when that heartbeat was sent (awake time), or undefined if unknown. */
  answered(seq: number): number | undefined {
    const sentAt = this.#unanswered.get(seq);
    // Messages arrive in order: an answer also settles every older question.
    for (const older of this.#unanswered.keys()) {
      if (older > seq) break;
      this.#unanswered.delete(older);
    }
    return sentAt;
  }
}
