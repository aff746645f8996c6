import { readFile } from 'node:fs/promises';
import type { ProcessUsage } from '../../shared/api-types.ts';

// Linux's USER_HZ, the unit of /proc/PID/stat's times: 100 on every architecture Node runs on there.
const TICKS_PER_SECOND = 100;

/** A process's resident memory, from Linux's /proc/PID/status; undefined elsewhere. */
export async function residentBytes(pid: number): Promise<number | undefined> {
  if (!(pid > 0)) return undefined;
  const text = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(text)?.[1];
  return kib === undefined ? undefined : Number(kib) * 1024;
}

/** Another process's CPU time and memory, from Linux's /proc; undefined elsewhere or once it is gone. */
export async function processUsage(pid: number): Promise<ProcessUsage | undefined> {
  if (!(pid > 0)) return undefined;
  const [stat, rss] = await Promise.all([
    readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ''),
    residentBytes(pid),
  ]);
  // The fields after the command's name, which is in parentheses and may hold spaces: utime and
  // stime are the 14th and 15th fields of the line (proc(5)).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  if (!Number.isFinite(ticks) || rss === undefined) return undefined;
  return { pid, cpuSeconds: ticks / TICKS_PER_SECOND, rss };
}

/** This process's CPU time and memory. */
export function ownUsage(): ProcessUsage {
  const cpu = process.cpuUsage();
  return { pid: process.pid, cpuSeconds: (cpu.user + cpu.system) / 1e6, rss: process.memoryUsage.rss() };
}
