// The harness for integration tests, exported as `syncd/testing`: starts the real service on a free
// loopback port with a temporary home and a fresh key, and takes it all down again.
import { rmSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { SyncdClient } from './client.ts';
import { isRunning } from './is-running.ts';
import { readStoredApiKey } from '../config/config-file.ts';
import { CONFIG_FILE, newApiKey } from '../home.ts';
import { settingSpecs } from '../settings.ts';
import { packageRoot, syncdBin } from '../paths.ts';
import { TLS_CERT_FILE } from '../tls.ts';

export { syncdBin };

export interface LogLine {
  role: 'supervisor' | 'worker';
  pid: number;
  msg: string;
  level: number;
  [field: string]: unknown;
}

export interface StartOptions {
  /** Extra flags for `syncd serve`; they win over the harness's own settings, as flags do. */
  args?: string[];
  /** Extra environment; SYNCD_* values here override the harness's own. */
  env?: Record<string, string>;
  /** Use this home instead of a fresh temporary one; it is then left in place. */
  home?: string;
  /** The key to serve with; default: a fresh random one (unless `args` or `env` give one). */
  apiKey?: string;
  /** Wait for the `ready` log line, and for the worker to hold the service, before resolving (default true). */
  waitReady?: boolean;
  /** How long to wait for `ready`; default 15 s. */
  readyTimeoutMs?: number;
  /** Start it as containers do, with `npm start` (`process` is then npm, not the supervisor). */
  viaNpm?: boolean;
  /** Where `npm start` runs; default: the package's root. */
  cwd?: string;
  /** Serve HTTPS with a self-signed pair generated into the home; `client` trusts it. */
  tls?: boolean;
  /**
   * Start it in a process group of its own, as a terminal or systemd does, so that a test can signal
   * the whole group: `process.kill(-service.process.pid, 'SIGINT')`.
   */
  detached?: boolean;
}

/**
 * How the service's process is started (execa's options), which types `Service.process`. Spelled out
 * so that both are one type: relating two of execa's generic result types costs the checker seconds.
 */
export type ProcessOptions = {
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdin: 'pipe';
  buffer: false;
  reject: false;
  cleanup: true;
  detached: boolean;
};

export interface Service {
  /** http://HOST:PORT (https with TLS), where the service listens: the address it actually bound. */
  url: string;
  /** HOST:PORT it actually bound (a port of 0 asked for is the port it got). */
  address: string;
  apiKey: string;
  /** A client of this service, with its key (and, with `tls`, trusting its certificate). */
  client: SyncdClient;
  home: string;
  /** The supervisor's pid, once it has logged its first line. */
  readonly supervisorPid: number | undefined;
  /** The serving worker's pid, as the service reports it. */
  workerPid(): Promise<number>;
  /** Every JSON log line of the supervisor and its workers so far, parsed. */
  logs: LogLine[];
  /** Every worker pid the supervisor has started, in order. */
  workerPids: number[];
  /** The process started: the supervisor, or npm with `viaNpm`. */
  process: ResultPromise<ProcessOptions>;
  /** Settles when that process has exited and its output has ended; awaiting it keeps the test alive. */
  readonly exited: Promise<{ exitCode: number | undefined; signal: string | undefined }>;
  /** The first log line for which `match` holds, waiting for it if need be. */
  waitForLog(match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** Ends every process it started, for sure, and removes the temporary home. */
  stop(): Promise<void>;
}

/**
 * Starts the real service. Call `stop()` when done (in tap: `t.teardown(service.stop)`). The service
 * never keeps the test process alive by itself: if a test forgets `stop()`, the process still ends
 * once its own work is done, and an exit hook then ends the service and removes the home; if the test
 * process is killed, the supervisor sees its standard input close and shuts down.
 */
export async function startService(options: StartOptions = {}): Promise<Service> {
  const home = options.home ?? (await mkdtemp(join(tmpdir(), 'syncd-test-')));
  const env: Record<string, string> = {
    SYNCD_HOME: home,
    // Port 0: the service picks a free port and says which; no race with other tests for one.
    SYNCD_ADDRESS: '127.0.0.1:0',
    // Other devices connect on loopback only, at a free port: tests never take 22000 from each other.
    SYNCD_SYNC_ADDRESS: 'tcp://127.0.0.1:0',
    SYNCD_API_KEY: options.apiKey ?? newApiKey(),
    SYNCD_LOG_LEVEL: 'info',
    // The harness reads the log as JSON lines (a test's own --log-format still wins).
    SYNCD_LOG_FORMAT: 'json',
    SYNCD_STOP_WITH_STDIN: '1',
    ...(options.tls ? { SYNCD_TLS: '1' } : {}),
    ...options.env,
  };
  const args = options.args ?? [];
  const [command, commandArgs] = options.viaNpm
    ? ['npm', ['start', '--silent', '--', ...args]]
    : [process.execPath, [syncdBin, 'serve', ...args]];
  const child = execa<ProcessOptions>(command, commandArgs, {
    cwd: options.cwd ?? packageRoot,
    env,
    stdin: 'pipe',
    buffer: false,
    reject: false,
    cleanup: true,
    detached: options.detached ?? false,
  });
  // Nothing of the service's holds the test process open: only what a test awaits does (below).
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr])
    (stream as { unref?: () => void } | null)?.unref?.();
  const alive = keepAlive();

  const logs: LogLine[] = [];
  const workerPids: number[] = [];
  const waiters = new Set<{ match: (line: LogLine) => boolean; found: (line: LogLine) => void }>();
  let pending = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString('utf8')).split('\n');
    pending = lines.pop() ?? '';
    for (const text of lines) {
      const line = parseLine(text);
      if (!line) continue;
      logs.push(line);
      if (line.msg === 'worker started' && typeof line.workerPid === 'number')
        workerPids.push(line.workerPid);
      for (const waiter of waiters) if (waiter.match(line)) waiter.found(line);
    }
  });
  child.stderr?.resume();
  const exited = child.then((result) => ({ exitCode: result.exitCode, signal: result.signal }));

  const waitForLog = (match: (line: LogLine) => boolean, timeoutMs = 15_000) => {
    const seen = logs.find(match);
    if (seen) return Promise.resolve(seen);
    return alive.during(
      new Promise<LogLine>((resolve, reject) => {
        const settle = () => {
          clearTimeout(timer);
          waiters.delete(waiter);
        };
        const waiter = {
          match,
          found: (line: LogLine) => {
            settle();
            resolve(line);
          },
        };
        const fail = (why: string) => {
          settle();
          reject(
            new Error(`${why}; the log so far:\n${logs.map((line) => JSON.stringify(line)).join('\n')}`),
          );
        };
        const timer = setTimeout(() => fail(`no matching log line within ${timeoutMs}ms`), timeoutMs);
        waiters.add(waiter);
        // The result settles only after stdout has ended, so every line has been seen by then.
        void exited.then(() => waiters.has(waiter) && fail('the service exited before the line came'));
      }),
    );
  };

  const supervisorPid = () => logs.find((line) => line.role === 'supervisor')?.pid;
  const pids = () => [...workerPids, supervisorPid(), child.pid].filter((pid): pid is number => !!pid);
  const cleanup = () => {
    // Workers first: one whose event loop is blocked never notices its supervisor go, and holds the
    // stdout pipe it inherited, so the supervisor's result would never settle while it lives.
    for (const pid of pids()) killQuietly(pid);
    if (!options.home) rmSync(home, { recursive: true, force: true });
  };
  running.add(cleanup);
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= alive.during(
      (async () => {
        running.delete(cleanup);
        for (const pid of pids()) killQuietly(pid);
        await exited;
        // The supervisor's end does not wait for its workers' once they are killed: a worker at low
        // priority (options.setLowPriority) on a busy machine can take a while to be given a CPU to die on.
        await whenGone(workerPids);
        if (!options.home) await rm(home, { recursive: true, force: true });
      })(),
    ));

  // Where it listens: known now when a port was given, else said by its first line once it is bound.
  // Unknown until the service says, when the configuration decides or the port is 0.
  const wanted = given(settingSpecs.address, args, env) ?? '';
  let address = wanted;
  let url = `${options.tls || given(settingSpecs.tls, args, env) === '1' ? 'https' : 'http'}://${address}`;
  const apiKey = given(settingSpecs.apiKey, args, env);
  const service: Service = {
    url,
    address,
    apiKey: apiKey ?? '',
    client: new SyncdClient({ address: url, apiKey }),
    home,
    get supervisorPid() {
      return supervisorPid();
    },
    workerPid: async () => (await service.client.status()).pid,
    logs,
    workerPids,
    process: child,
    get exited() {
      return alive.during(exited);
    },
    waitForLog,
    stop,
  };
  try {
    if (wanted === '' || wanted.endsWith(':0') || options.waitReady !== false) {
      const started = await waitForLog((line) => line.msg === 'supervisor started', options.readyTimeoutMs);
      address = String(started.address);
      url = String(started.url);
    }
    if (options.waitReady !== false) {
      await waitForLog((line) => line.msg === 'ready', options.readyTimeoutMs);
      // The worker answers first and takes the service (index, folders, devices) a moment later; until
      // then /rest/db and the like answer 503. Ready means both, or the first acquire failing (it is
      // retried, and the endpoints say why meanwhile).
      await waitForLog(
        (line) => line.msg === 'service held' || /could not acquire the service/.test(String(line.msg)),
        options.readyTimeoutMs,
      );
    }
  } catch (error) {
    await stop();
    throw error;
  }
  // A generated key is in the home once the service has started, the self-signed certificate too.
  const key = apiKey ?? (await readStoredApiKey(join(home, CONFIG_FILE)).catch(() => undefined)) ?? '';
  const ca = url.startsWith('https:')
    ? await readFile(join(home, TLS_CERT_FILE), 'utf8').catch(() => undefined)
    : undefined;
  Object.assign(service, {
    address,
    url,
    apiKey: key,
    client: new SyncdClient({ address: url, apiKey: key, ca }),
  });
  return service;
}

/** A setting as the service reads it: its flag in `args`, else its variable in `env`; empty is unset. */
function given(
  spec: { flag: string; env: string },
  args: string[],
  env: Record<string, string>,
): string | undefined {
  for (let at = args.length - 1; at >= 0; at--) {
    const arg = args[at] as string;
    if (arg === `--${spec.flag}`) return args[at + 1];
    if (arg.startsWith(`--${spec.flag}=`)) return arg.slice(spec.flag.length + 3);
  }
  return env[spec.env] || undefined;
}

/**
 * Keeps the test process alive while a promise of the harness is pending (a log line awaited, an exit,
 * a stop), and only then: the service's own handles are unreferenced.
 */
function keepAlive() {
  let holders = 0;
  let timer: NodeJS.Timeout | undefined;
  return {
    during<T>(promise: Promise<T>): Promise<T> {
      if (holders++ === 0) timer = setInterval(() => {}, 1 << 30);
      const release = () => {
        if (--holders === 0) clearInterval(timer);
      };
      promise.then(release, release);
      return promise;
    },
  };
}

// What is still running when the test runner's process exits: ended synchronously in its exit hook.
const running = new Set<() => void>();
process.once('exit', () => {
  for (const cleanup of running) cleanup();
});

function parseLine(text: string): LogLine | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    return JSON.parse(text) as LogLine;
  } catch {
    return undefined;
  }
}

/** Once none of `pids` runs any more (a zombie has ended), or after `timeoutMs`. */
async function whenGone(pids: number[], timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (pids.some(isRunning) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 10));
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}
