import { readdirSync, readFileSync } from 'node:fs';

/** What a worker's threads have waited for a CPU while ready to run. */
export interface CpuWait {
  /** In all, summed over its threads, in ms, as Linux has counted it so far. */
  waitedMs: number;
  /**
   * Whether one of its threads is ready to run and has not run since the last reading: Linux counts
   * a wait only once it is over, so one under way is seen this way.
   */
  waitingNow: boolean;
}

/**
 * Reads, from Linux's `/proc/PID/task/TID/schedstat` and `stat`, how long the threads of process `pid`
 * (a worker) have waited for a CPU. Every thread counts, not only the event loop's: a starved loop
 * also waits on its starved helpers (V8's garbage collector and compiler threads), and then sleeps
 * rather than waits. Where that is not known (another system, a process gone), nothing was waited.
 */
export class CpuWaits {
  readonly #pid: number;
  /** The CPU time of each thread at the last reading, in ns. */
  #ran = new Map<string, number>();

  constructor(pid: number) {
    this.#pid = pid;
  }

  read(): CpuWait {
    const ran = new Map<string, number>();
    let waitedNs = 0;
    let waitingNow = false;
    try {
      for (const task of readdirSync(`/proc/${this.#pid}/task`)) {
        try {
          const dir = `/proc/${this.#pid}/task/${task}`;
          const [onCpu, waited] = readFileSync(`${dir}/schedstat`, 'utf8').split(' ').map(Number);
          if (!Number.isFinite(onCpu) || !Number.isFinite(waited)) continue;
          waitedNs += waited as number;
          ran.set(task, onCpu as number);
          // Only a thread that has not run since the last reading can be waiting now.
          if (this.#ran.get(task) !== onCpu) continue;
          const stat = readFileSync(`${dir}/stat`, 'utf8');
          if (stat[stat.lastIndexOf(')') + 2] === 'R') waitingNow = true;
        } catch {
          // A thread gone meanwhile.
        }
      }
    } catch {
      return { waitedMs: 0, waitingNow: false };
    }
    this.#ran = ran;
    return { waitedMs: waitedNs / 1e6, waitingNow };
  }
}
