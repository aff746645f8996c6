// The one definition of what the supervisor and the worker say to each other over the IPC channel.
// Every message carries a `syncd:` tag so that nothing else on the channel (execa, Node itself)
// can be mistaken for one of ours.

export interface RecentError {
  /** RFC 3339 time the error was recorded. */
  when: string;
  message: string;
  /** pino level number: 40 warn, 50 error, 60 fatal. */
  level: number;
}

export interface SupervisorStats {
  pid: number;
  startTime: string;
  /** Restarts asked for (API, SIGHUP), never crashes. */
  restarts: number;
  crashes: number;
}

export interface WorkerInit {
  apiKey: string;
  /** The address the supervisor actually bound, as HOST:PORT. */
  address: string;
  logLevel: string;
  drainTimeoutMs: number;
  /** Errors the new worker's list starts with, such as how its predecessor crashed. */
  initialErrors: RecentError[];
  /** Host header values accepted, or null for any (see shared/hosts.ts). */
  allowedHosts: string[] | null;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  maxConnections: number;
  /** The certificate and key to serve HTTPS with, or null for HTTP. */
  tls: { cert: string; key: string } | null;
  supervisor: SupervisorStats;
}

export type DrainReason = 'restart' | 'shutdown';
export type Action = 'restart' | 'shutdown';

/**
 * Supervisor to worker. `connection` travels with the accepted socket as its handle; the worker
 * answers `accepted` with the same id, and until then the supervisor keeps its own copy of the
 * socket so that a worker dying with it unread loses nothing.
 */
export type SupervisorMessage =
  | { type: 'syncd:init'; init: WorkerInit }
  | { type: 'syncd:connection'; id: number }
  | { type: 'syncd:stats'; supervisor: SupervisorStats }
  | { type: 'syncd:drain'; reason: DrainReason }
  | { type: 'syncd:heartbeat'; seq: number };

/** Worker to supervisor. */
export type WorkerMessage =
  | { type: 'syncd:ready' }
  | { type: 'syncd:accepted'; id: number }
  | { type: 'syncd:action'; action: Action }
  | { type: 'syncd:heartbeat'; seq: number };

export type SupervisorMessageType = SupervisorMessage['type'];
export type WorkerMessageType = WorkerMessage['type'];

/** A table with one handler per message type: the compiler rejects a table that misses one. */
export type Dispatch<M extends { type: string }, Extra extends unknown[] = []> = {
  [T in M['type']]: (message: Extract<M, { type: T }>, ...extra: Extra) => void;
};

const supervisorTypes: ReadonlySet<string> = new Set<SupervisorMessageType>([
  'syncd:init',
  'syncd:connection',
  'syncd:stats',
  'syncd:drain',
  'syncd:heartbeat',
]);
const workerTypes: ReadonlySet<string> = new Set<WorkerMessageType>([
  'syncd:ready',
  'syncd:accepted',
  'syncd:action',
  'syncd:heartbeat',
]);

export function isSupervisorMessage(value: unknown): value is SupervisorMessage {
  return hasType(value) && supervisorTypes.has(value.type);
}

export function isWorkerMessage(value: unknown): value is WorkerMessage {
  return hasType(value) && workerTypes.has(value.type);
}

/** Runs the table's handler for the message's type. */
export function dispatch<M extends { type: string }, Extra extends unknown[]>(
  table: Dispatch<M, Extra>,
  message: M,
  ...extra: Extra
): void {
  const handler = table[message.type as M['type']] as (m: M, ...e: Extra) => void;
  handler(message, ...extra);
}

function hasType(value: unknown): value is { type: string } {
  return typeof value === 'object' && value !== null && typeof (value as { type: unknown }).type === 'string';
}
