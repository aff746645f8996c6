import { Requests } from '../shared/ipc/requests.ts';
import type { AwakeClock } from './awake-clock.ts';
import type { CpuWait } from './cpu-wait.ts';

export type Beat = { seq: number } | { hungForMs: number; waitedForCpuMs: number };

/**
 * Heartbeats of the serving worker. Each beat is a numbered question the worker answers over IPC; a
 * worker is hung when a question has gone unanswered for longer than the timeout of awake time, that
 * is, time during which both processes could run (see AwakeClock), less the time the worker's threads
 * waited for a CPU, and is not judged while one of them waits for one: a worker at low priority
 * (options.setLowPriority, niceness 11) on a machine whose cores are taken by busier processes is
 * starved, not hung, and a new one would fare no better. A hung worker is one whose loop ran, or
 * slept in a system call, for the whole timeout.
 */
export class Watchdog {
  readonly #clock: AwakeClock;
  readonly #timeoutMs: number;
  readonly #cpuWaits: { read(): CpuWait };
  /** When each unanswered heartbeat was sent, in awake time, and how long the worker had waited for a CPU. */
  readonly #unanswered = new Requests<{ at: number; waitedMs: number }>();

  /** `cpuWaits`: what the worker's threads have waited for a CPU (see cpu-wait.ts). */
  constructor(clock: AwakeClock, timeoutMs: number, cpuWaits: { read(): CpuWait }) {
    this.#clock = clock;
    this.#timeoutMs = timeoutMs;
    this.#cpuWaits = cpuWaits;
  }

  /** The next heartbeat to send, or, when the oldest one has waited past the timeout, how long it has. */
  beat(): Beat {
    const now = this.#clock.now();
    const { waitedMs, waitingNow } = this.#cpuWaits.read();
    const oldest = this.#unanswered.oldest();
    if (oldest !== undefined && !waitingNow) {
      const passed = now - oldest.at;
      const waitedForCpuMs = Math.min(passed, Math.max(0, waitedMs - oldest.waitedMs));
      if (passed - waitedForCpuMs > this.#timeoutMs) {
        return { hungForMs: Math.round(passed), waitedForCpuMs: Math.round(waitedForCpuMs) };
      }
    }
    return { seq: this.#unanswered.open({ at: now, waitedMs }) };
  }

  /** Records an answer; returns when that heartbeat was sent (awake time), or undefined if unknown. */
  answered(seq: number): number | undefined {
    return this.#unanswered.settleUpTo(seq).answered?.at;
  }
}
