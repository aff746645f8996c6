import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import getPort from 'get-port';

const root = fileURLToPath(new URL('../..', import.meta.url));
// The built bundle, what `npm start` runs; tap's `before` step builds it.
export const supervisorEntry = join(root, 'dist', 'supervisor', 'main.js');

export interface LogLine {
  role: 'supervisor' | 'worker';
  pid: number;
  msg: string;
  level: number;
  [field: string]: unknown;
}

export interface Service {
  url: string;
  address: string;
  apiKey: string;
  home: string;
  process: ResultPromise<{ reject: false; buffer: false; stdin: 'ignore' }>;
  logs: LogLine[];
  /** Every worker pid the supervisor has started, in order. */
  workerPids: number[];
  /** Resolves with the first log line for which `match` holds, waiting for it if need be. */
  waitForLog(match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  exited: Promise<{ exitCode: number | undefined; signal: string | undefined }>;
  /** Ends the supervisor and its workers for sure, then removes the home. */
  stop(): Promise<void>;
}

export interface StartOptions {
  args?: string[];
  env?: Record<string, string>;
  /** Use this home instead of a fresh temporary one; it is then not removed. */
  home?: string;
  apiKey?: string;
  /** Wait for the `ready` line (default true). */
  waitReady?: boolean;
  /** Start it as users do in containers, with `npm start`; `process` is then npm. */
  viaNpm?: boolean;
  /** Where `npm start` runs (default: this checkout). */
  cwd?: string;
}

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** Starts the real supervisor as a process on a free loopback port; `t.teardown` ends it. */
export async function startService(t: Teardown, options: StartOptions = {}): Promise<Service> {
  const home = options.home ?? (await mkdtemp(join(tmpdir(), 'syncd-test-')));
  const address = options.env?.SYNCD_ADDRESS ?? `127.0.0.1:${await getPort({ host: '127.0.0.1' })}`;
  const apiKey = options.apiKey ?? `test-key-${Math.random().toString(36).slice(2)}-${Date.now()}`;
  const [command, args] = options.viaNpm
    ? ['npm', ['start', '--silent', '--', ...(options.args ?? [])]]
    : ['node', [supervisorEntry, ...(options.args ?? [])]];
  const child = execa(command, args, {
    cwd: options.cwd ?? root,
    env: {
      SYNCD_HOME: home,
      SYNCD_ADDRESS: address,
      SYNCD_API_KEY: apiKey,
      SYNCD_LOG_LEVEL: 'info',
      ...options.env,
    },
    stdin: 'ignore',
    buffer: false,
    reject: false,
    cleanup: true,
  });

  const logs: LogLine[] = [];
  const workerPids: number[] = [];
  const waiters = new Set<{ match: (line: LogLine) => boolean; resolve: (line: LogLine) => void }>();
  let pending = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString('utf8')).split('\n');
    pending = lines.pop() ?? '';
    for (const text of lines) {
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        continue;
      }
      logs.push(line);
      if (line.msg === 'worker started' && typeof line.workerPid === 'number')
        workerPids.push(line.workerPid);
      for (const waiter of waiters) {
        if (waiter.match(line)) {
          waiters.delete(waiter);
          waiter.resolve(line);
        }
      }
    }
  });
  child.stderr?.resume();

  const exited = child.then((result) => ({ exitCode: result.exitCode, signal: result.signal }));

  const dump = () => logs.map((line) => JSON.stringify(line)).join('\n');
  const waitForLog = (match: (line: LogLine) => boolean, timeoutMs = 15_000) => {
    const found = logs.find(match);
    if (found) return Promise.resolve(found);
    return new Promise<LogLine>((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer);
        waiters.delete(waiter);
      };
      const waiter = {
        match,
        resolve: (line: LogLine) => {
          settle();
          resolve(line);
        },
      };
      const fail = (why: string) => {
        settle();
        reject(new Error(`${why}; the log so far:\n${dump()}`));
      };
      const timer = setTimeout(() => fail(`no matching log line within ${timeoutMs}ms`), timeoutMs);
      waiters.add(waiter);
      // The result settles only after stdout has ended, so every line has been seen by then.
      void exited.then(() => waiters.has(waiter) && fail('the supervisor exited before the line came'));
    });
  };

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    // Workers first: one with a blocked event loop never sees its supervisor go, and it holds the
    // stdout pipe it inherited, so the supervisor's result would never settle while it lives.
    for (const pid of [...workerPids, ...supervisorPids(logs)]) killIfAlive(pid);
    child.kill('SIGKILL');
    await exited;
    if (!options.home) await rm(home, { recursive: true, force: true });
  };
  t.teardown(stop);

  const service: Service = {
    url: `http://${address}`,
    address,
    apiKey,
    home,
    process: child,
    logs,
    workerPids,
    waitForLog,
    exited,
    stop,
  };
  if (options.waitReady !== false) await waitForLog((line) => line.msg === 'ready');
  return service;
}

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  /** Parsed when the response is JSON, else the text; tests read the fields they assert on. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a test reads whatever JSON the service answered.
  body: any;
}

/** One request on a connection of its own, with the service's key unless `key` says otherwise. */
export function call(
  service: Pick<Service, 'url' | 'apiKey'>,
  method: string,
  path: string,
  init: { body?: string; headers?: Record<string, string>; key?: string | null; timeoutMs?: number } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...init.headers };
  const key = init.key === undefined ? service.apiKey : init.key;
  if (key !== null) headers['x-api-key'] = key;
  if (init.body !== undefined) headers['content-length'] ??= String(Buffer.byteLength(init.body));
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${service.url}${path}`, { method, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const json = response.headers['content-type']?.startsWith('application/json');
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: json ? JSON.parse(text) : text,
        });
      });
    });
    request.setTimeout(init.timeoutMs ?? 10_000, () =>
      request.destroy(new Error(`${method} ${path}: no answer in time`)),
    );
    request.on('error', reject);
    request.end(init.body);
  });
}

/** Resolves with the connection's outcome: 'connected' or the error code, such as ECONNREFUSED. */
export function tryConnect(address: string): Promise<string> {
  const [host, port] = [
    address.slice(0, address.lastIndexOf(':')),
    Number(address.slice(address.lastIndexOf(':') + 1)),
  ];
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/** Polls `check` until it returns a value other than undefined; fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${what}: not within ${timeoutMs}ms${lastError ? ` (last error: ${lastError})` : ''}`);
}

/**
 * Whether the process still runs. A zombie has exited and only waits to be reaped by whichever process
 * adopted it, which can take a while in a container: it counts as gone.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/** The supervisor pids the log names: under npm, the supervisor is npm's child, not `process`. */
export function supervisorPids(logs: LogLine[]): number[] {
  return [...new Set(logs.filter((line) => line.role === 'supervisor').map((line) => line.pid))];
}

function killIfAlive(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone: nothing to end.
  }
}
