// The one definition of what the supervisor and the worker say to each other over the IPC channel.
// Every message carries a `syncd:` tag so that nothing else on the channel (execa, Node itself)
// can be mistaken for one of ours.
import type { Configuration } from '../config/defaults.ts';
import type { RecentError, SupervisorStats } from '../api-types.ts';
import type { ErrorChange } from '../recent-errors.ts';
import type { Settings } from '../settings.ts';

/**
 * Set to `KILL` in a worker's environment when the supervisor started it through util-linux's setpriv
 * with a parent-death signal: the kernel then kills the worker when the supervisor dies, and the worker
 * needs no thread of its own watching for it (worker/orphan-guard.ts).
 */
export const PARENT_DEATH_SIGNAL_ENV = 'SYNCD_PARENT_DEATH_SIGNAL';

/** The settings a worker serves with, as read by the supervisor. */
export type WorkerSettings = Pick<
  Settings,
  'logLevel' | 'drainTimeoutMs' | 'headersTimeoutMs' | 'requestTimeoutMs' | 'maxConnections'
> &
  Partial<Pick<Settings, 'trace' | 'gui' | 'guiAssets' | 'logFormat'>>;

export interface WorkerInit {
  settings: WorkerSettings;
  apiKey: string;
  /** This device's ID (see shared/identity.ts). */
  deviceId: string;
  /** The home folder the service runs from. */
  home: string;
  /** The address the supervisor actually bound, as HOST:PORT. */
  address: string;
  /** The recent errors so far: the supervisor keeps the list across workers. */
  errors: RecentError[];
  /** Host header values accepted, or null for any (see shared/hosts.ts). */
  allowedHosts: string[] | null;
  /** The certificate and key to serve HTTPS with, or null for HTTP. */
  tls: { cert: string; key: string } | null;
  /** The device's certificate and key (cert.pem, key.pem), for the sync protocol's TLS. */
  device: { cert: string; key: string };
  supervisor: SupervisorStats;
  /** The configuration (config.json), kept by the supervisor, and the number of its last change. */
  config: Configuration;
  configRevision: number;
  /** Which of the configuration's GUI settings a flag or the environment overrides. */
  overridden: Overridden;
  /** The sync protocol's listeners. */
  sync: SyncListening;
  /** Discovery as a flag or the environment sets it, over the configuration's options; null: not set. */
  announce: { local: boolean | null; global: boolean | null };
  /** Where the worker's event IDs start (see EVENT_IDS_PER_WORKER). */
  eventIdBase: number;
}

/**
 * The event IDs each worker has: the n-th worker the supervisor starts numbers its events from
 * n × 2^32 + 1, after any an earlier worker gave, so that a client polling `/rest/events?since=ID`
 * across a restart (Syncthing's GUI) gets the new worker's events; Syncthing's IDs start again at 1
 * only when its whole process does.
 */
export const EVENT_IDS_PER_WORKER = 2 ** 32;

/**
 * Microseconds on the machine's monotonic clock (CLOCK_MONOTONIC, which every process of it reads
 * alike): when a worker took a restart request, compared with when the supervisor started a worker.
 */
export function monotonicMicros(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/**
 * The sync protocol's listen addresses, as configured (options.listenAddresses, or the flag that
 * overrides them): where each is bound (tcp://HOST:PORT), or why it is not.
 */
export type SyncListening = Record<string, { bound: string | null; error: string | null }>;

export interface Overridden {
  guiAddress: boolean;
  apiKey: boolean;
  tls: boolean;
}

/** What a worker serves with that a configuration change can move: sent to every worker. */
export type Serving = Pick<WorkerInit, 'address' | 'allowedHosts' | 'apiKey' | 'sync'>;

/** The answer to a configuration save: the error names what could not be done, and nothing was. */
export type SaveAnswer =
  | { ok: true; revision: number }
  | { ok: false; status: 400 | 409 | 500; message: string };

export type Action = 'restart' | 'shutdown';
export type DrainReason = Action;

/**
 * The listening sockets the supervisor owns, each handed to the worker that serves its kind: `gui`, the
 * REST interface, goes to the newest worker that serves HTTP; `sync`, other devices' connections, to
 * the worker that holds the service.
 */
export type ListenerName = 'gui' | 'sync';

/**
 * Supervisor to worker. Request-like messages carry a `seq` that their answer repeats (see
 * requests.ts). `connection` travels with the accepted socket as its handle; the worker answers
 * `accepted`, and until then the supervisor keeps its own copy of the socket, so that a worker dying
 * with it unread loses nothing. `acquire` and `release` hand over the service, which one worker at a
 * time holds (see worker/service/service.ts). `errors` carries a change to the recent errors made
 * elsewhere (by the supervisor or another worker), so that every copy of the list agrees. `config` is a
 * saved configuration, sent to every worker before the saver hears `config-answer`; `serving` what the
 * workers serve with, once a saved configuration moved it.
 */
export type SupervisorMessage =
  | { type: 'syncd:init'; init: WorkerInit }
  | { type: 'syncd:connection'; seq: number; listener: ListenerName }
  | { type: 'syncd:stats'; supervisor: SupervisorStats }
  | { type: 'syncd:errors'; change: ErrorChange }
  | { type: 'syncd:drain'; reason: DrainReason }
  | { type: 'syncd:heartbeat'; seq: number }
  | { type: 'syncd:acquire'; seq: number }
  | { type: 'syncd:release'; seq: number }
  | { type: 'syncd:config'; config: Configuration; revision: number }
  | { type: 'syncd:config-answer'; seq: number; answer: SaveAnswer }
  | { type: 'syncd:serving'; serving: Serving };

/**
 * Worker to supervisor. `errors` reports a change the worker made to its copy of the recent errors;
 * `config-save` asks the supervisor, which keeps the configuration and its file, to save a changed one
 * made from revision `base`: a save from an older revision is refused (409), so none is lost.
 */
export type WorkerMessage =
  | { type: 'syncd:ready' }
  // Each listener numbers its own connections: the answer names which.
  | { type: 'syncd:accepted'; seq: number; listener: ListenerName }
  // `askedAt`: when the worker took the request, on monotonicMicros's clock.
  | { type: 'syncd:action'; action: Action; askedAt: number }
  | { type: 'syncd:errors'; change: ErrorChange }
  | { type: 'syncd:heartbeat'; seq: number }
  | { type: 'syncd:acquired'; seq: number }
  | { type: 'syncd:acquire-failed'; seq: number; error: string }
  | { type: 'syncd:released'; seq: number }
  | { type: 'syncd:config-save'; seq: number; config: Configuration; base: number };

export type SupervisorMessageType = SupervisorMessage['type'];
export type WorkerMessageType = WorkerMessage['type'];

/** A table with one handler per message type: the compiler rejects a table that misses one. */
export type Dispatch<M extends { type: string }, Extra extends unknown[] = []> = {
  [T in M['type']]: (message: Extract<M, { type: T }>, ...extra: Extra) => void;
};

// The types each side accepts. `satisfies Record` makes a forgotten type a compile error, where a
// Set of a subset would compile and silently drop that message.
const supervisorTypes = {
  'syncd:init': true,
  'syncd:connection': true,
  'syncd:stats': true,
  'syncd:errors': true,
  'syncd:drain': true,
  'syncd:heartbeat': true,
  'syncd:acquire': true,
  'syncd:release': true,
  'syncd:config': true,
  'syncd:config-answer': true,
  'syncd:serving': true,
} as const satisfies Record<SupervisorMessageType, true>;
const workerTypes = {
  'syncd:ready': true,
  'syncd:accepted': true,
  'syncd:action': true,
  'syncd:errors': true,
  'syncd:heartbeat': true,
  'syncd:acquired': true,
  'syncd:acquire-failed': true,
  'syncd:released': true,
  'syncd:config-save': true,
} as const satisfies Record<WorkerMessageType, true>;

export function isSupervisorMessage(value: unknown): value is SupervisorMessage {
  return hasType(value) && Object.hasOwn(supervisorTypes, value.type);
}

export function isWorkerMessage(value: unknown): value is WorkerMessage {
  return hasType(value) && Object.hasOwn(workerTypes, value.type);
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
