import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/**
 * The niceness Syncthing's main process runs at with `setLowPriority` (its default): Syncthing 1.19
 * asks setpriority(2) for its process group, and every thread of it shows 11.
 */
export const LOW_PRIORITY_NICENESS = 11;

/**
 * Lowers every thread of this process to `niceness`, leaving those already lower (Linux keeps a
 * niceness per thread; a thread made later takes its maker's). Answers what went wrong, if anything.
 */
export function lowerPriority(niceness = LOW_PRIORITY_NICENESS): string | undefined {
  try {
    const tasks = process.platform === 'linux' ? readdirSync('/proc/self/task').map(Number) : [0];
    for (const tid of tasks) {
      if (getPriority(tid) < niceness) setPriority(tid, niceness);
    }
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
