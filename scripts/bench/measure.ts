import { execFile, spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { SyncdClient } from '../../shared/client/client.ts';
import { pollUntil } from '../../shared/client/poll.ts';
import { startPingers } from './pingers.ts';
import type { Running, Target } from './targets.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Milliseconds from spawning the process to its first 200 pong. */
export async function startToPong(target: Target): Promise<number> {
  const started = performance.now();
  const running = await target.start();
  try {
    await untilPong(running, 30_000);
    return performance.now() - started;
  } finally {
    await running.stop();
  }
}

export interface RestartResult {
  restarts: number;
  pings: number;
  failed: number;
  /** A sample of what failed, such as ECONNREFUSED. */
  failures: string[];
  /** Over the pings that were answered. */
  p99Ms: number;
  worstMs: number;
  /** From the restart request to the first pong of the new process, median. */
  restartToPongMs: number;
  /** Whether the service was still up after the last restart. */
  survived: boolean;
}

/** `restarts` restarts in a row while 4 clients ping every 5 ms, two over keep-alive connections. */
export async function restartsUnderLoad(target: Target, restarts: number): Promise<RestartResult> {
  const running = await target.start();
  try {
    await untilPong(running, 30_000);
    const kept = startPingers({
      url: running.url,
      apiKey: running.apiKey,
      clients: 2,
      intervalMs: 5,
      keepAlive: true,
    });
    const fresh = startPingers({
      url: running.url,
      apiKey: running.apiKey,
      clients: 2,
      intervalMs: 5,
      keepAlive: false,
    });
    const times: number[] = [];
    let survived = true;
    for (let i = 0; i < restarts && survived; i++) {
      const before = (await client(running).status()).startTime;
      const asked = performance.now();
      await client(running)
        .restart()
        .catch(() => undefined);
      const after = await pollUntil(30_000, async () => {
        const status = await client(running)
          .status()
          .catch(() => undefined);
        return status && status.startTime !== before ? status : undefined;
      });
      survived = after !== undefined;
      if (survived) times.push(performance.now() - asked);
    }
    const reports = [await kept.stop(), await fresh.stop()];
    const latencies = reports.flatMap((r) => r.latencies).sort((a, b) => a - b);
    const failures = reports.flatMap((r) => r.failures);
    return {
      restarts: times.length,
      pings: latencies.length + failures.length,
      failed: failures.length,
      failures: [...new Set(failures.map((f) => f.slice(0, 40)))].slice(0, 3),
      p99Ms: percentile(latencies, 0.99),
      worstMs: latencies.at(-1) ?? 0,
      restartToPongMs: median(times),
      survived,
    };
  } finally {
    await running.stop();
  }
}

/** `count` restarts in a row, each waited for; whether the service is still up and what it counted. */
export async function endurance(
  target: Target,
  count: number,
): Promise<{
  done: number;
  up: boolean;
  restarts: number;
  crashes: number;
  /** The supervisor's resident memory idle before the first restart and idle after the last (MB). */
  rssBeforeMb: number;
  rssAfterMb: number;
}> {
  const running = await target.start();
  try {
    await untilPong(running, 30_000);
    await sleep(1500);
    const rssBeforeMb = await rssMb(running.process.pid ?? 0);
    let done = 0;
    for (; done < count; done++) {
      const before = (await client(running).status()).pid;
      await client(running).restart();
      const moved = await pollUntil(30_000, async () => {
        const status = await client(running)
          .status()
          .catch(() => undefined);
        return status && status.pid !== before ? true : undefined;
      });
      if (!moved) break;
    }
    const status = await client(running)
      .status()
      .catch(() => undefined);
    await sleep(1500);
    return {
      rssBeforeMb,
      rssAfterMb: await rssMb(running.process.pid ?? 0),
      done,
      up: status !== undefined,
      restarts: status?.supervisor.restarts ?? 0,
      crashes: status?.supervisor.crashes ?? 0,
    };
  } finally {
    await running.stop();
  }
}

/** Milliseconds from an idle service's shutdown request to the exit of the process started. */
export async function shutdownToExit(target: Target): Promise<number> {
  const running = await target.start();
  try {
    await untilPong(running, 30_000);
    await sleep(500);
    const asked = performance.now();
    await client(running)
      .shutdown()
      .catch(() => undefined);
    await running.exited;
    return performance.now() - asked;
  } finally {
    await running.stop();
  }
}

/** Resident memory in MB of a Node process that runs nothing, idle: what any supervisor starts from. */
export async function emptyNodeRss(): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
  try {
    await sleep(1500);
    return await rssMb(child.pid ?? 0);
  } finally {
    child.kill();
  }
}

/** Resident memory in MB of the process started and of its child, once idle. */
export async function idleRss(target: Target): Promise<{ parentMb: number; childMb: number }> {
  const running = await target.start();
  try {
    await untilPong(running, 30_000);
    await sleep(1500);
    const parent = running.process.pid ?? 0;
    const child = await childPid(parent);
    return { parentMb: await rssMb(parent), childMb: child ? await rssMb(child) : 0 };
  } finally {
    await running.stop();
  }
}

/**
 * Pings per second from 16 clients, with wrk when installed, else autocannon: over keep-alive
 * connections, or with a new connection for every ping.
 */
export async function throughput(
  running: Running,
  seconds: number,
  keepAlive = true,
  connections = 16,
): Promise<{ rps: number; tool: string }> {
  const url = `${running.url}/rest/system/ping`;
  const headers: Record<string, string> = { 'x-api-key': running.apiKey };
  if (!keepAlive) headers.connection = 'close';
  if (await has('wrk')) {
    const flags = Object.entries(headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
    const args = ['-t1', `-c${connections}`, `-d${seconds}s`, ...flags, url];
    const { stdout } = await promisify(execFile)('wrk', args);
    const match = /Requests\/sec:\s+([\d.]+)/.exec(stdout);
    return { rps: match ? Number(match[1]) : 0, tool: `wrk -t1 -c${connections}` };
  }
  const { default: autocannon } = await import('autocannon');
  const result = await autocannon({ url, connections, duration: seconds, headers });
  return { rps: result.requests.average, tool: `autocannon -c${connections}` };
}

export async function untilPong(running: Running, timeoutMs: number): Promise<void> {
  const ok = await pollUntil(
    timeoutMs,
    async () => {
      const answer = await client(running)
        .ping()
        .catch(() => undefined);
      return answer?.ping === 'pong' ? true : undefined;
    },
    5,
  );
  if (!ok) throw new Error(`${running.url} did not answer within ${timeoutMs}ms`);
}

// Found through every process's parent, not /proc/PID/task/PID/children: Go starts children from
// other threads than the first, and that file lists only the thread's own.
async function childPid(pid: number): Promise<number | undefined> {
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === pid) return Number(entry);
  }
  return undefined;
}

async function rssMb(pid: number): Promise<number> {
  return (await procStatusKib(pid, 'VmRSS')) / 1024;
}

/** A memory field of /proc/PID/status (VmRSS, VmHWM), in KiB; 0 once the process is gone. */
export async function procStatusKib(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
}

/** A process's CPU time so far, user and system (proc(5): stat's 14th and 15th fields, in 1/100 s). */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export async function has(command: string): Promise<boolean> {
  return promisify(execFile)('sh', ['-c', `command -v ${command}`]).then(
    () => true,
    () => false,
  );
}

// The same client for syncd and Syncthing: both speak this interface.
function client(running: Running): SyncdClient {
  return new SyncdClient({ address: running.url, apiKey: running.apiKey, timeoutMs: 5000 });
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : (sorted[Math.floor((sorted.length - 1) / 2)] as number);
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0
    ? 0
    : (sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] as number);
}

/**
 * The time during each API restart when no worker holds the service: from the old worker's release to
 * the new one's acquire, as the supervisor's `service held` line reports it (`gapMs`).
 */
export async function serviceGap(restarts: number): Promise<number[]> {
  const { startService } = await import('../../shared/client/testing.ts');
  const service = await startService();
  try {
    // The first worker's own acquire comes after its ready: not a restart's gap.
    await service.waitForLog((line) => line.msg === 'service held');
    const gaps: number[] = [];
    for (let i = 0; i < restarts; i++) {
      const before = service.logs.filter((line) => line.msg === 'service held').length;
      await service.client.restart();
      const held = await service.waitForLog(
        (line) =>
          line.msg === 'service held' &&
          service.logs.filter((l) => l.msg === 'service held').indexOf(line) >= before,
      );
      gaps.push(Number(held.gapMs));
    }
    return gaps;
  } finally {
    await service.stop();
  }
}
