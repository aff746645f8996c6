import type { Socket } from 'node:net';
import type { Logger } from '../shared/logger.ts';
import type { Dispatch, RecentError, SupervisorStats, WorkerMessage } from '../shared/protocol.ts';
import { dispatch } from '../shared/protocol.ts';
import type { Settings } from '../shared/settings.ts';
import { CrashPolicy } from './crash-policy.ts';
import type { Listener } from './listener.ts';
import { describeExit, type WorkerEvents, type WorkerExit, WorkerProcess } from './worker-process.ts';

export type SupervisorState = 'starting' | 'running' | 'restarting' | 'recovering' | 'stopping' | 'stopped';

export const EXIT_OK = 0;
export const EXIT_UNEXPECTED = 1;
export const EXIT_BAD_CONFIG = 2;
export const EXIT_GAVE_UP = 3;

export interface SupervisorOptions {
  settings: Pick<
    Settings,
    | 'logLevel'
    | 'drainTimeoutMs'
    | 'crashLimit'
    | 'crashWindowMs'
    | 'startupTimeoutMs'
    | 'heartbeatTimeoutMs'
    | 'headersTimeoutMs'
    | 'requestTimeoutMs'
    | 'maxConnections'
  >;
  /** Host header values the worker accepts, or null for any. */
  allowedHosts: string[] | null;
  /** What the worker serves HTTPS with, or null for HTTP. */
  tls?: { cert: string; key: string } | null;
  apiKey: string;
  /** The listening socket, already bound; the supervisor hands its connections to the worker. */
  listener: Listener;
  /** HOST:PORT actually bound. */
  address: string;
  logger: Logger;
  spawn?: (events: WorkerEvents) => WorkerProcess;
}

// How much longer than the drain timeout a stopping worker gets before it is killed: the worker
// enforces the drain timeout itself, this only catches one that cannot.
const KILL_MARGIN_MS = 2000;

/**
 * Owns the service's lifecycle: one worker serving at a time, a replacement started before the old
 * one drains, crashed workers replaced after a backoff, and every connection accepted on the
 * supervisor's socket handed to whichever worker serves, or held until one does.
 */
export class Supervisor {
  state: SupervisorState = 'starting';
  /** Resolves with the process's exit code once every worker has exited. */
  readonly done: Promise<number>;

  readonly #options: SupervisorOptions;
  readonly #log: Logger;
  readonly #crashPolicy: CrashPolicy;
  readonly #startTime = new Date().toISOString();
  #active: WorkerProcess | undefined;
  #starting: WorkerProcess | undefined;
  readonly #draining = new Set<WorkerProcess>();
  readonly #waiting: Socket[] = [];
  readonly #timers = new Map<WorkerProcess, NodeJS.Timeout>();
  #respawnTimer: NodeJS.Timeout | undefined;
  #connectionSeq = 0;
  #heartbeatSeq = 0;
  #heartbeatTimer: NodeJS.Timeout | undefined;
  #restarts = 0;
  #crashes = 0;
  /** How earlier workers crashed, for the next worker's error list. */
  #crashReports: RecentError[] = [];
  #everReady = false;
  #exitCode = EXIT_OK;
  #resolveDone!: (code: number) => void;

  constructor(options: SupervisorOptions) {
    this.#options = options;
    this.#log = options.logger;
    this.#crashPolicy = new CrashPolicy({
      limit: options.settings.crashLimit,
      windowMs: options.settings.crashWindowMs,
    });
    this.done = new Promise((resolve) => {
      this.#resolveDone = resolve;
    });
    options.listener.handOff((socket) => this.accept(socket));
  }

  // The serving worker is asked for a heartbeat several times per timeout; one that stays silent for
  // the whole timeout has a blocked event loop and serves nobody: it is killed, and counts as a crash.
  #heartbeat(): void {
    const worker = this.#active;
    if (!worker) return;
    const { heartbeatTimeoutMs } = this.#options.settings;
    const silentMs = Date.now() - worker.lastHeartbeat;
    if (silentMs > heartbeatTimeoutMs) {
      const reason = `it answered no heartbeat for ${silentMs}ms (timeout ${heartbeatTimeoutMs}ms): its event loop is blocked`;
      this.#log.error({ workerPid: worker.pid }, `worker ${worker.pid} is hung: ${reason}; killing it`);
      worker.kill('SIGKILL', reason);
      return;
    }
    worker.send({ type: 'syncd:heartbeat', seq: ++this.#heartbeatSeq });
  }

  start(): void {
    const { heartbeatTimeoutMs } = this.#options.settings;
    const every = Math.max(50, Math.min(1000, Math.floor(heartbeatTimeoutMs / 4)));
    this.#heartbeatTimer = setInterval(() => this.#heartbeat(), every);
    this.#spawn('start');
  }

  get stats(): SupervisorStats {
    return { pid: process.pid, startTime: this.#startTime, restarts: this.#restarts, crashes: this.#crashes };
  }

  /** A connection accepted on the socket: to the serving worker, or held until one serves. */
  accept(socket: Socket): void {
    if (this.state === 'stopping' || this.state === 'stopped') {
      socket.destroy();
      return;
    }
    if (this.#active) this.#handOver(this.#active, socket);
    // While no worker serves, connections wait, up to the same bound a worker serves at once.
    else if (this.#waiting.length < this.#options.settings.maxConnections) this.#waiting.push(socket);
    else socket.destroy();
  }

  /** Starts a new worker; the serving one drains once the new one is ready. Joins one under way. */
  restart(reason: string): void {
    if (this.state === 'stopping' || this.state === 'stopped') {
      this.#log.info({ reason }, 'restart ignored: the supervisor is stopping');
      return;
    }
    if (this.#starting || this.#respawnTimer) {
      this.#log.info({ reason }, 'restart joins the one under way');
      return;
    }
    this.#restarts += 1;
    this.state = 'restarting';
    this.#log.info({ reason, restarts: this.#restarts }, 'restarting');
    this.#spawn(reason);
  }

  /** Stops accepting, lets every worker drain, then resolves `done` with the exit code. */
  shutdown(reason: string, exitCode = EXIT_OK): void {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.state = 'stopping';
    this.#exitCode = exitCode;
    this.#log.info({ reason, exitCode }, 'shutting down');
    this.#options.listener.server.close();
    clearTimeout(this.#respawnTimer);
    this.#respawnTimer = undefined;
    for (const socket of this.#waiting.splice(0)) socket.destroy();
    if (this.#starting) {
      this.#starting.stopRequested = true;
      this.#starting.kill('SIGKILL');
    }
    if (this.#active) this.#stop(this.#active, 'shutdown');
    this.#finishIfStopped();
  }

  /** Ends every worker at once, for a second signal while draining. */
  forceStop(reason: string): void {
    this.#log.warn({ reason }, 'stopping at once: every worker is killed');
    for (const worker of this.#workers()) {
      worker.stopRequested = true;
      worker.kill('SIGKILL');
    }
    this.#options.listener.server.close();
    this.#finish(EXIT_UNEXPECTED);
  }

  #spawn(reason: string): void {
    const spawn = this.#options.spawn ?? ((events: WorkerEvents) => new WorkerProcess(events));
    const worker = spawn({
      onMessage: (from, message) => this.#onMessage(from, message),
      onExit: (from, exit) => this.#onExit(from, exit),
    });
    this.#starting = worker;
    this.#log.info({ workerPid: worker.pid, reason }, 'worker started');
    const { settings, apiKey, address } = this.#options;
    worker.send({
      type: 'syncd:init',
      init: {
        apiKey,
        address,
        logLevel: settings.logLevel,
        drainTimeoutMs: settings.drainTimeoutMs,
        initialErrors: [...this.#crashReports],
        supervisor: this.stats,
        allowedHosts: this.#options.allowedHosts,
        headersTimeoutMs: settings.headersTimeoutMs,
        requestTimeoutMs: settings.requestTimeoutMs,
        maxConnections: settings.maxConnections,
        tls: this.#options.tls ?? null,
      },
    });
    this.#setTimer(worker, settings.startupTimeoutMs, () => {
      this.#log.error(
        { workerPid: worker.pid, startupTimeoutMs: settings.startupTimeoutMs },
        'worker was not ready within the startup timeout; killing it',
      );
      worker.kill('SIGKILL', `it was not ready within the startup timeout of ${settings.startupTimeoutMs}ms`);
    });
  }

  #onMessage(worker: WorkerProcess, message: WorkerMessage): void {
    dispatch(this.#handlers, message, worker);
  }

  readonly #handlers: Dispatch<WorkerMessage, [WorkerProcess]> = {
    'syncd:ready': (_message, worker) => this.#onReady(worker),
    'syncd:accepted': ({ id }, worker) => {
      // The worker holds the connection now. destroy() only closes this process's copy of the
      // descriptor; end() would shut the connection down for the worker too.
      worker.unacknowledged.get(id)?.destroy();
      worker.unacknowledged.delete(id);
    },
    'syncd:action': ({ action }, worker) => {
      // A restart asked through a worker that has already been replaced is satisfied by that replacement.
      if (action === 'restart' && worker !== this.#active) {
        this.#log.info({ workerPid: worker.pid }, 'restart from a replaced worker: already done');
      } else if (action === 'restart') this.restart('API');
      else this.shutdown('API');
    },
    'syncd:heartbeat': (_message, worker) => {
      worker.lastHeartbeat = Date.now();
    },
  };

  #onReady(worker: WorkerProcess): void {
    if (worker !== this.#starting) return;
    this.#clearTimer(worker);
    worker.readyAt = Date.now();
    worker.lastHeartbeat = worker.readyAt;
    const previous = this.#active;
    const first = !this.#everReady;
    this.#everReady = true;
    this.#active = worker;
    this.#starting = undefined;
    this.#crashReports = [];
    this.state = 'running';
    for (const socket of this.#waiting.splice(0)) this.#handOver(worker, socket);
    const startupMs = worker.readyAt - worker.startedAt;
    if (first) {
      this.#log.info({ address: this.#options.address, workerPid: worker.pid, startupMs }, 'ready');
    } else {
      this.#log.info({ workerPid: worker.pid, startupMs }, 'worker ready');
    }
    if (previous) this.#stop(previous, 'restart');
  }

  #onExit(worker: WorkerProcess, exit: WorkerExit): void {
    this.#clearTimer(worker);
    const description = describeExit(worker.pid, exit);
    const wasServing = worker === this.#active || worker === this.#starting;
    if (worker === this.#active) this.#active = undefined;
    if (worker === this.#starting) this.#starting = undefined;
    // Connections the worker never took are still whole here: the next worker serves them.
    const untaken = [...worker.unacknowledged.values()];
    worker.unacknowledged.clear();
    for (const socket of untaken) this.accept(socket);
    if (this.#draining.delete(worker) || worker.stopRequested) {
      const clean = exit.code === 0 && !exit.error;
      this.#log[clean ? 'info' : 'warn'](
        { workerPid: worker.pid, code: exit.code, signal: exit.signal },
        clean ? 'worker exited' : description,
      );
    } else if (wasServing) {
      this.#onCrash(worker, description);
    }
    this.#finishIfStopped();
  }

  #onCrash(worker: WorkerProcess, description: string): void {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.#crashes += 1;
    const now = Date.now();
    this.#crashReports.push({ when: new Date(now).toISOString(), message: description, level: 50 });
    const verdict = this.#crashPolicy.record(now, worker.readyAt ? now - worker.readyAt : 0);
    if ('giveUp' in verdict) {
      this.#log.fatal(
        { workerPid: worker.pid, crashes: this.#crashes },
        `${description}; ${verdict.giveUp}: giving up`,
      );
      this.shutdown('too many crashes', EXIT_GAVE_UP);
      return;
    }
    this.#active?.send({ type: 'syncd:stats', supervisor: this.stats });
    if (this.#starting) {
      this.#log.error(
        { workerPid: worker.pid, crashes: this.#crashes },
        `${description}; its replacement is starting`,
      );
      return;
    }
    this.state = this.#active ? 'restarting' : 'recovering';
    this.#log.error(
      { workerPid: worker.pid, crashes: this.#crashes, delayMs: verdict.delayMs },
      `${description}; replacing it in ${verdict.delayMs}ms`,
    );
    this.#respawnTimer = setTimeout(() => {
      this.#respawnTimer = undefined;
      if (this.state !== 'stopping' && this.state !== 'stopped') this.#spawn('crash');
    }, verdict.delayMs);
  }

  #stop(worker: WorkerProcess, reason: 'restart' | 'shutdown'): void {
    if (worker === this.#active) this.#active = undefined;
    worker.stopRequested = true;
    this.#draining.add(worker);
    worker.send({ type: 'syncd:drain', reason }, undefined, () => worker.kill('SIGKILL'));
    this.#setTimer(worker, this.#options.settings.drainTimeoutMs + KILL_MARGIN_MS, () => {
      this.#log.warn({ workerPid: worker.pid }, 'worker did not stop within the drain timeout; killing it');
      worker.kill('SIGKILL', 'it did not stop within the drain timeout');
    });
  }

  #handOver(worker: WorkerProcess, socket: Socket): void {
    const id = ++this.#connectionSeq;
    worker.unacknowledged.set(id, socket);
    worker.send({ type: 'syncd:connection', id }, socket, () => {
      // The channel closed under the connection; the worker's exit hands it on.
    });
  }

  #finishIfStopped(): void {
    if (this.state === 'stopping' && this.#workers().length === 0) this.#finish(this.#exitCode);
  }

  #finish(exitCode: number): void {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    clearInterval(this.#heartbeatTimer);
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#log.info({ exitCode }, 'supervisor stopped');
    this.#resolveDone(exitCode);
  }

  #workers(): WorkerProcess[] {
    return [this.#active, this.#starting, ...this.#draining].filter(
      (w): w is WorkerProcess => !!w && !w.exited,
    );
  }

  #setTimer(worker: WorkerProcess, ms: number, action: () => void): void {
    this.#clearTimer(worker);
    this.#timers.set(worker, setTimeout(action, ms));
  }

  #clearTimer(worker: WorkerProcess): void {
    clearTimeout(this.#timers.get(worker));
    this.#timers.delete(worker);
  }
}
