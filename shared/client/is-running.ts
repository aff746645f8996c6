import { readFileSync } from 'node:fs';

/**
 * Whether the process still runs. A zombie has exited and only waits to be reaped by whichever process
 * adopted it, which can take a while in a container: it counts as gone.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    // No /proc (not Linux): alive, as the signal said.
    return true;
  }
}
