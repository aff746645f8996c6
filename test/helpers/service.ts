import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import {
  type LogLine,
  type Service,
  type StartOptions,
  startService as start,
} from '../../shared/client/testing.ts';
import './teardown-first.ts';
import type { Teardown } from './teardown-first.ts';

export { syncdBin } from '../../shared/client/testing.ts';
export type { LogLine, Service, StartOptions };

/** The harness's startService, with the service ended in `t.teardown`, whatever the test's outcome. */
export async function startService(t: Teardown, options: StartOptions = {}): Promise<Service> {
  const service = await start(options);
  t.teardown(service.stop);
  return service;
}

/** A REST call through the service's client, the body sent as JSON; the parsed answer of a 2xx. */
export function api<T = unknown>(service: Service, method: string, path: string, body?: unknown): Promise<T> {
  return service.client.call<T>(
    method,
    path,
    body === undefined ? undefined : JSON.stringify(body),
    'application/json',
  );
}

/**
 * A service started as a device for other devices to reach: its device ID and sync address too, and
 * `call` for its REST interface (what shareFolder takes as a device).
 */
export async function startDevice(t: Teardown): Promise<{
  syncd: Service;
  id: string;
  listen: string;
  call: (method: string, path: string, body?: unknown) => Promise<unknown>;
}> {
  const syncd = await startService(t);
  const status = await api<{
    myID: string;
    connectionServiceStatus: Record<string, { lanAddresses: string[] }>;
  }>(syncd, 'GET', '/rest/system/status');
  const listen = Object.values(status.connectionServiceStatus)[0]?.lanAddresses[0] ?? '';
  return {
    syncd,
    id: status.myID,
    listen,
    call: (method, path, body) => api(syncd, method, path, body),
  };
}

/** Does `ask` (a restart, a reset) and waits until a new worker holds the service. */
export async function withNewWorker(service: Service, ask: () => Promise<unknown>): Promise<void> {
  const worker = await service.workerPid();
  await ask();
  const deadline = Date.now() + 60_000;
  for (;;) {
    const answer = await api<{ pid: number; service: { held: boolean } }>(
      service,
      'GET',
      '/rest/system/status',
    ).catch(() => undefined);
    if (answer && answer.pid !== worker && answer.service.held) return;
    if (Date.now() > deadline) throw new Error('no new worker held the service within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
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

/** The outcome of one connection attempt: 'connected', or the error code, such as ECONNREFUSED. */
export { connectOutcome as tryConnect } from '../../shared/client/poll.ts';

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

/** Whether the process still runs (a zombie counts as gone). */
export { isRunning as isAlive } from '../../shared/client/is-running.ts';

/** The supervisor pids the log names: under npm, the supervisor is npm's child, not `process`. */
export function supervisorPids(logs: LogLine[]): number[] {
  return [...new Set(logs.filter((line) => line.role === 'supervisor').map((line) => line.pid))];
}
