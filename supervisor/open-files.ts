import { readFile } from 'node:fs/promises';
import { SettingError, settingLabel } from '../shared/settings.ts';

// Descriptors a process needs besides its connections: Node's own, the IPC channel and pipes, the
// listening socket, a second worker during a restart, log output.
export const DESCRIPTORS_BESIDE_CONNECTIONS = 100;

/**
 * The connections each process can hold at once within its open-file limit. Past the limit a
 * connection handed to the worker never arrives and hangs, so the limit is checked at start: a
 * `--max-connections` given above it stops the supervisor (exit code 2); the default is lowered to fit,
 * with a warning. `limit` is the soft limit on open files (Node raises it to the hard limit at start).
 */
export function fitConnections(
  maxConnections: number,
  given: boolean,
  limit: number | undefined,
): { maxConnections: number; warning?: string } {
  if (limit === undefined || maxConnections + DESCRIPTORS_BESIDE_CONNECTIONS <= limit)
    return { maxConnections };
  const fits = limit - DESCRIPTORS_BESIDE_CONNECTIONS;
  const advice = `raise the limit (ulimit -n, LimitNOFILE= in systemd, --ulimit nofile= in Docker)`;
  if (given || fits < 1) {
    throw new SettingError(
      settingLabel('maxConnections'),
      `${maxConnections} connections need ${maxConnections + DESCRIPTORS_BESIDE_CONNECTIONS} open files, but this process may open only ${limit}: ${advice} or lower it to ${Math.max(1, fits)}`,
    );
  }
  return {
    maxConnections: fits,
    warning: `serving at most ${fits} connections instead of ${maxConnections}: this process may open only ${limit} files; ${advice} to serve more`,
  };
}

/** This process's soft limit on open files, where the system tells it (/proc on Linux). */
export async function openFileLimit(): Promise<number | undefined> {
  const text = await readFile('/proc/self/limits', 'utf8').catch(() => '');
  const match = /^Max open files\s+(\d+)/m.exec(text);
  return match ? Number(match[1]) : undefined;
}
