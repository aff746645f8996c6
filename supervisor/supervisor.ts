import type { Socket } from 'node:net';
import type { Logger } from '../shared/logger.ts';
import type { Configuration } from '../shared/config/defaults.ts';
import {
  type Dispatch,
  dispatch,
  EVENT_IDS_PER_WORKER,
  monotonicMicros,
  type ListenerName,
  type SaveAnswer,
  type Serving,
  type SupervisorMessage,
  type WorkerInit,
  type WorkerMessage,
  type WorkerSettings,
} from '../shared/ipc/protocol.ts';
import type { SupervisorStats } from '../shared/api-types.ts';
import { type ErrorChange, RecentErrors } from '../shared/recent-errors.ts';
import type { Settings } from '../shared/settings.ts';
import { AwakeClock } from './awake-clock.ts';
import { CrashPolicy } from './crash-policy.ts';
import { Handoff } from './handoff.ts';
import { ServiceHandover } from './service-handover.ts';
import { type CpuWait, CpuWaits } from './cpu-wait.ts';
import { Watchdog } from './watchdog.ts';
import { describeExit, type SpawnWorker, type WorkerExit, type WorkerHandle } from './worker-handle.ts';

export type SupervisorState = 'starting' | 'running' | 'restarting' | 'recovering' | 'stopping' | 'stopped';
export type SupervisorSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

export const EXIT_OK = 0;
export const EXIT_UNEXPECTED = 1;
export const EXIT_BAD_CONFIG = 2;
export const EXIT_GAVE_UP = 3;

export interface SupervisorOptions {
  settings: WorkerSettings &
    Pick<Settings, 'crashLimit' | 'crashWindowMs' | 'startupTimeoutMs' | 'heartbeatTimeoutMs'>;
  /** What every worker is told besides its settings; `serve` changes what the next ones get. */
  worker: Pick<
    WorkerInit,
    | 'apiKey'
    | 'deviceId'
    | 'device'
    | 'home'
    | 'address'
    | 'allowedHosts'
    | 'tls'
    | 'overridden'
    | 'sync'
    | 'announce'
  >;
  /** The configuration: every worker starts with it, and saves go through it (see config-store.ts). */
  config: ConfigKeeper;
  /** Stops accepting on the listening sockets (at shutdown). */
  closeListeners: () => void;
  logger: Logger;
  spawn: SpawnWorker;
  /** The recent errors, kept here across workers; the logger's warnings should feed it. */
  errors?: RecentErrors;
  /** Reads of a monotonic clock in ms; for tests. */
  readClock?: () => number;
  /** Reads of the clock workers date restart requests by (monotonicMicros); for tests. */
  readMonotonic?: () => number;
  /** What a worker's threads have waited for a CPU (by default from /proc, cpu-wait.ts); for tests. */
  cpuWaits?: (pid: number) => { read(): CpuWait };
}

export interface ConfigKeeper {
  readonly config: Configuration;
  readonly revision: number;
  save(config: Configuration, base: number): Promise<SaveAnswer>;
}

/** What the supervisor knows of one of its workers. */
interface Slot {
  worker: WorkerHandle;
  /** Awake time it was started and became ready. */
  startedAt: number;
  /** When it was started, on the clock workers date restart requests by (monotonicMicros). */
  spawnedAt: number;
  readyAt?: number;
  /** Told to stop (drain or kill): its exit is planned, never a crash. */
  planned: boolean;
  /** Cancels its pending deadline (startup or drain). */
  cancelDeadline?: () => void;
}

/** Which worker each listener's connections go to: the newest serving HTTP, or the one holding the service. */
const feeds: Record<ListenerName, 'http' | 'service'> = { gui: 'http', sync: 'service' };

// How much longer than the drain timeout a stopping worker gets before it is killed: the worker
// enforces the drain timeout itself, this only catches one that cannot.
const KILL_MARGIN_MS = 2000;
// A terminal's Ctrl-C and hang-up and systemd's stop signal every process of the group, and npm
// forwards what it receives: one stop can arrive twice within milliseconds. Only a stop signal later
// than this after the first is someone asking again, and ends everything at once.
export const SAME_DELIVERY_MS = 500;

/**
 * Owns the service's lifecycle: one worker serving at a time, a replacement started before the old
 * one drains, crashed workers replaced after a backoff, and every connection accepted on the
 * supervisor's socket handed to whichever worker serves, or held until one does.
 */
export class Supervisor {
  /** Resolves with the process's exit code once every worker has exited. */
  readonly done: Promise<number>;
  readonly errors: RecentErrors;

  readonly #options: SupervisorOptions;
  readonly #log: Logger;
  readonly #crashPolicy: CrashPolicy;
  readonly #clock: AwakeClock;
  readonly #handoffs: Record<ListenerName, Handoff>;
  readonly #handover: ServiceHandover;
  readonly #startTime = new Date().toISOString();
  readonly #readMonotonic: () => number;
  readonly #slots = new Map<WorkerHandle, Slot>();
  #active: Slot | undefined;
  #starting: Slot | undefined;
  #watchdog: Watchdog | undefined;
  #heartbeatTimer: NodeJS.Timeout | undefined;
  #respawnTimer: NodeJS.Timeout | undefined;
  #restarts = 0;
  #crashes = 0;
  /** Workers started so far, each with event IDs of its own (EVENT_IDS_PER_WORKER). */
  #spawned = 0;
  /** A restart asked after the starting worker was started: made once that one is ready. */
  #restartAgain: string | undefined;
  #everReady = false;
  #stopping: { exitCode: number; at: number } | undefined;
  #stopped = false;
  #resolveDone!: (code: number) => void;

  constructor(options: SupervisorOptions) {
    // A copy: `serve` changes what workers are told.
    this.#options = { ...options, worker: { ...options.worker } };
    this.#readMonotonic = options.readMonotonic ?? monotonicMicros;
    this.#log = options.logger;
    this.errors = options.errors ?? new RecentErrors();
    this.#crashPolicy = new CrashPolicy({
      limit: options.settings.crashLimit,
      windowMs: options.settings.crashWindowMs,
    });
    // A tick later than one and a half intervals is a gap in scheduling, not load.
    this.#clock = new AwakeClock(1.5 * this.#heartbeatEveryMs, options.readClock);
    this.#handoffs = {
      gui: new Handoff('gui', this.#clock, options.settings.maxConnections),
      sync: new Handoff('sync', this.#clock, options.settings.maxConnections),
    };
    this.#handover = new ServiceHandover({
      clock: this.#clock,
      logger: this.#log,
      releaseTimeoutMs: options.settings.drainTimeoutMs,
      onHolder: (worker) => this.#feed('service', worker),
    });
    this.done = new Promise((resolve) => {
      this.#resolveDone = resolve;
    });
  }

  /** Derived from which workers exist, so that it can never disagree with them. */
  get state(): SupervisorState {
    if (this.#stopped) return 'stopped';
    if (this.#stopping) return 'stopping';
    if (this.#active) return this.#starting ? 'restarting' : 'running';
    return this.#everReady ? 'recovering' : 'starting';
  }

  get stats(): SupervisorStats {
    return { pid: process.pid, startTime: this.#startTime, restarts: this.#restarts, crashes: this.#crashes };
  }

  start(): void {
    this.#clock.start(this.#heartbeatEveryMs);
    this.#heartbeatTimer = setInterval(() => this.#heartbeat(), this.#heartbeatEveryMs);
    this.#spawn('start');
  }

  /** A connection accepted on a listening socket: to the worker that serves it, or held until one does. */
  accept(listener: ListenerName, socket: Socket): void {
    this.#handoffs[listener].accept(socket);
  }

  /** The worker that holds the service, if one does. */
  get serviceHolder(): number | undefined {
    return this.#handover.holder?.pid;
  }

  /** SIGHUP restarts; SIGINT and SIGTERM shut down, and a second one, asked again, ends everything at once. */
  signal(signal: SupervisorSignal, now = Date.now()): void {
    if (signal === 'SIGHUP') this.restart(signal);
    else if (!this.#stopping) this.shutdown(signal, EXIT_OK, now);
    else if (now - this.#stopping.at > SAME_DELIVERY_MS) this.forceStop(`second ${signal}`);
    else this.#log.debug({ signal }, 'the same stop signal again, delivered twice: ignored');
  }

  /**
   * Starts a new worker; the serving one drains once the new one is ready. A restart under way whose
   * worker was started after `askedAt` (monotonicMicros; none given: any) is joined; one started
   * before gets another restart once its worker is ready, so that each restart asked for is followed
   * by a worker started after it.
   */
  restart(reason: string, askedAt?: number): void {
    if (this.#stopping || this.#stopped) {
      this.#log.info({ reason }, 'restart ignored: the supervisor is stopping');
      return;
    }
    const starting = this.#starting;
    if (starting && askedAt !== undefined && starting.spawnedAt <= askedAt) {
      this.#log.info({ reason }, 'restart asked while one is under way: another follows it');
      this.#restartAgain = reason;
      return;
    }
    if (starting || this.#respawnTimer) {
      this.#log.info({ reason }, 'restart joins the one under way');
      return;
    }
    this.#restarts += 1;
    this.#log.info({ reason, restarts: this.#restarts }, 'restarting');
    this.#broadcast({ type: 'syncd:stats', supervisor: this.stats });
    this.#spawn(reason);
  }

  /** Stops accepting, lets every worker drain, then resolves `done` with the exit code. */
  shutdown(reason: string, exitCode = EXIT_OK, now = Date.now()): void {
    if (this.#stopping || this.#stopped) return;
    this.#stopping = { exitCode, at: now };
    this.#log.info({ reason, exitCode }, 'shutting down');
    this.#options.closeListeners();
    for (const handoff of Object.values(this.#handoffs)) handoff.close();
    this.#handover.stop();
    clearTimeout(this.#respawnTimer);
    this.#respawnTimer = undefined;
    if (this.#starting) this.#kill(this.#starting, 'SIGKILL');
    this.#starting = undefined;
    if (this.#active) this.#stop(this.#active, 'shutdown');
    this.#finishIfStopped();
  }

  /** Ends every worker at once, for a second signal while draining. */
  forceStop(reason: string): void {
    this.#log.warn({ reason }, 'stopping at once: every worker is killed');
    for (const slot of this.#slots.values()) this.#kill(slot, 'SIGKILL');
    this.#options.closeListeners();
    for (const handoff of Object.values(this.#handoffs)) handoff.close();
    this.#handover.stop();
    this.#finish(EXIT_UNEXPECTED);
  }

  /** The worker's exit and messages: what `spawn` must report. */
  readonly #events = {
    onMessage: (worker: WorkerHandle, message: WorkerMessage) => {
      const slot = this.#slots.get(worker);
      if (slot) dispatch(this.#handlers, message, slot);
    },
    onExit: (worker: WorkerHandle, exit: WorkerExit) => this.#onExit(worker, exit),
  };

  readonly #handlers: Dispatch<WorkerMessage, [Slot]> = {
    'syncd:ready': (_message, slot) => this.#onReady(slot),
    'syncd:accepted': ({ seq, listener }, { worker }) => this.#handoffs[listener].acknowledged(worker, seq),
    'syncd:action': ({ action, askedAt }, slot) => {
      if (action === 'shutdown') return this.shutdown('API');
      // Asked through a worker already replaced (a keep-alive connection it still drains): done if
      // its replacement was started after the request, and asked again of the new one otherwise.
      const serving = this.#active;
      if (slot !== serving && serving && serving.spawnedAt > askedAt) {
        this.#log.info({ workerPid: slot.worker.pid }, 'restart from a replaced worker: already done');
      } else this.restart('API', askedAt);
    },
    'syncd:errors': ({ change }, slot) => {
      this.errors.apply(change);
      this.#broadcast({ type: 'syncd:errors', change }, slot);
    },
    'syncd:heartbeat': ({ seq }, slot) => {
      if (slot !== this.#active || !this.#watchdog) return;
      const sentAt = this.#watchdog.answered(seq);
      if (sentAt === undefined) return;
      const lost = Object.values(this.#handoffs).reduce(
        (sum, handoff) => sum + handoff.dropLost(slot.worker, sentAt),
        0,
      );
      if (lost > 0) {
        this.#log.warn(
          { workerPid: slot.worker.pid, lost },
          `${lost} connections handed to worker ${slot.worker.pid} never reached it and were closed (is its open-file limit too low?)`,
        );
      }
    },
    'syncd:acquired': ({ seq }, { worker }) => this.#handover.acquired(worker, seq),
    'syncd:acquire-failed': ({ seq, error }, { worker }) => this.#handover.acquireFailed(worker, seq, error),
    'syncd:released': ({ seq }, { worker }) => this.#handover.released(worker, seq),
    // Every worker has the saved configuration before the one that saved it hears so: a client that
    // reads it back on any connection gets what it wrote.
    'syncd:config-save': ({ seq, config, base }, slot) => {
      void this.#options.config.save(config, base).then((answer) => {
        if (answer.ok) {
          const { config: saved, revision } = this.#options.config;
          this.#broadcast({ type: 'syncd:config', config: saved, revision });
        }
        slot.worker.send({ type: 'syncd:config-answer', seq, answer });
      });
    },
  };

  /** What workers serve with changed (a saved configuration moved it): the next ones, and every one now. */
  serve(serving: Partial<Serving> & Partial<Pick<WorkerInit, 'tls'>>): void {
    Object.assign(this.#options.worker, serving);
    const { address, allowedHosts, apiKey, sync } = this.#options.worker;
    this.#broadcast({ type: 'syncd:serving', serving: { address, allowedHosts, apiKey, sync } });
  }

  /** Records a change to the recent errors made here, and tells every worker. */
  recordError(change: ErrorChange): void {
    this.errors.apply(change);
    this.#broadcast({ type: 'syncd:errors', change });
  }

  get #heartbeatEveryMs(): number {
    return Math.max(50, Math.min(1000, Math.floor(this.#options.settings.heartbeatTimeoutMs / 4)));
  }

  // The serving worker is asked for a heartbeat several times per timeout; one that leaves a question
  // unanswered for the whole timeout has a blocked event loop and serves nobody: it is killed, and
  // counts as a crash.
  #heartbeat(): void {
    const slot = this.#active;
    if (!slot || !this.#watchdog) return;
    const beat = this.#watchdog.beat();
    if ('seq' in beat) {
      slot.worker.send({ type: 'syncd:heartbeat', seq: beat.seq });
      return;
    }
    const { heartbeatTimeoutMs } = this.#options.settings;
    const waited = beat.waitedForCpuMs > 0 ? `${beat.waitedForCpuMs}ms of it waiting for a CPU; ` : '';
    const reason = `it answered no heartbeat for ${beat.hungForMs}ms (${waited}timeout ${heartbeatTimeoutMs}ms): its event loop is blocked`;
    this.#log.error(
      { workerPid: slot.worker.pid },
      `worker ${slot.worker.pid} is hung: ${reason}; killing it`,
    );
    this.#watchdog = undefined;
    slot.worker.kill('SIGKILL', reason);
  }

  #spawn(reason: string): void {
    const worker = this.#options.spawn(this.#events);
    const slot: Slot = {
      worker,
      startedAt: this.#clock.now(),
      spawnedAt: this.#readMonotonic(),
      planned: false,
    };
    this.#slots.set(worker, slot);
    this.#starting = slot;
    this.#log.info({ workerPid: worker.pid, reason }, 'worker started');
    const { settings } = this.#options;
    worker.send({
      type: 'syncd:init',
      init: {
        ...this.#options.worker,
        settings: {
          logLevel: settings.logLevel,
          logFormat: settings.logFormat,
          drainTimeoutMs: settings.drainTimeoutMs,
          headersTimeoutMs: settings.headersTimeoutMs,
          requestTimeoutMs: settings.requestTimeoutMs,
          maxConnections: settings.maxConnections,
          trace: settings.trace,
          gui: settings.gui,
          guiAssets: settings.guiAssets,
        },
        errors: this.errors.list(),
        supervisor: this.stats,
        config: this.#options.config.config,
        configRevision: this.#options.config.revision,
        eventIdBase: this.#spawned++ * EVENT_IDS_PER_WORKER,
      },
    });
    slot.cancelDeadline = this.#clock.deadline(settings.startupTimeoutMs, () => {
      this.#log.error(
        { workerPid: worker.pid, startupTimeoutMs: settings.startupTimeoutMs },
        'worker was not ready within the startup timeout; killing it',
      );
      worker.kill('SIGKILL', `it was not ready within the startup timeout of ${settings.startupTimeoutMs}ms`);
    });
  }

  #onReady(slot: Slot): void {
    // A worker killed while starting (a shutdown, a timeout) may still have its ready on the way.
    if (slot !== this.#starting || this.#stopping) return;
    slot.cancelDeadline?.();
    slot.readyAt = this.#clock.now();
    const previous = this.#active;
    const first = !this.#everReady;
    this.#everReady = true;
    this.#active = slot;
    this.#starting = undefined;
    const { pid } = slot.worker;
    const cpuWaits = this.#options.cpuWaits?.(pid) ?? new CpuWaits(pid);
    this.#watchdog = new Watchdog(this.#clock, this.#options.settings.heartbeatTimeoutMs, cpuWaits);
    this.#feed('http', slot.worker);
    const fields = { workerPid: slot.worker.pid, startupMs: Math.round(slot.readyAt - slot.startedAt) };
    if (first) this.#log.info({ address: this.#options.worker.address, ...fields }, 'ready');
    else this.#log.info(fields, 'worker ready');
    if (previous) this.#stop(previous, 'restart');
    // HTTP has moved at once; the service follows once its holder has let go.
    this.#handover.moveTo(slot.worker);
    const again = this.#restartAgain;
    this.#restartAgain = undefined;
    if (again !== undefined) this.restart(again);
  }

  /** From now on the listeners that feed `kind` hand their connections to `worker` (none: they hold them). */
  #feed(kind: 'http' | 'service', worker: WorkerHandle | undefined): void {
    for (const [name, handoff] of Object.entries(this.#handoffs) as Array<[ListenerName, Handoff]>) {
      if (feeds[name] === kind) handoff.serveWith(worker);
    }
  }

  #onExit(worker: WorkerHandle, exit: WorkerExit): void {
    const slot = this.#slots.get(worker);
    if (!slot) return;
    this.#slots.delete(worker);
    slot.cancelDeadline?.();
    const wasActive = slot === this.#active;
    const wasStarting = slot === this.#starting;
    if (wasActive) {
      this.#active = undefined;
      this.#watchdog = undefined;
    }
    if (wasStarting) {
      this.#starting = undefined;
      // Its restart has failed or become a crash's: the one asked for after it goes with it.
      this.#restartAgain = undefined;
    }
    // Connections the worker never took are still whole here: the next worker serves them.
    for (const handoff of Object.values(this.#handoffs)) handoff.takeBack(worker);
    this.#handover.exited(worker);
    const description = describeExit(worker.pid, exit);
    if (slot.planned) {
      const clean = exit.code === 0 && !exit.error;
      this.#log[clean ? 'info' : 'warn'](
        { workerPid: worker.pid, code: exit.code, signal: exit.signal },
        clean ? 'worker exited' : description,
      );
    } else if (wasStarting && this.#active) {
      // A replacement that cannot start (a bad deploy, a build under way) ends its restart; the worker
      // that serves keeps serving, and this is no crash of a serving worker.
      this.#log.error(
        { workerPid: worker.pid, servingPid: this.#active.worker.pid },
        `restart failed: ${description}; worker ${this.#active.worker.pid} keeps serving`,
      );
    } else if (wasActive || wasStarting) {
      this.#onCrash(slot, description);
    }
    this.#finishIfStopped();
  }

  #onCrash(slot: Slot, description: string): void {
    if (this.#stopping || this.#stopped) return;
    this.#crashes += 1;
    const upMs = slot.readyAt === undefined ? 0 : this.#clock.now() - slot.readyAt;
    const verdict = this.#crashPolicy.record(Date.now(), upMs);
    if ('giveUp' in verdict) {
      this.#log.fatal(
        { workerPid: slot.worker.pid, crashes: this.#crashes },
        `${description}; ${verdict.giveUp}: giving up`,
      );
      this.shutdown('too many crashes', EXIT_GAVE_UP);
      return;
    }
    this.#broadcast({ type: 'syncd:stats', supervisor: this.stats });
    if (this.#starting) {
      this.#log.error(
        { workerPid: slot.worker.pid, crashes: this.#crashes },
        `${description}; its replacement is starting`,
      );
      return;
    }
    this.#log.error(
      { workerPid: slot.worker.pid, crashes: this.#crashes, delayMs: verdict.delayMs },
      `${description}; replacing it in ${verdict.delayMs}ms`,
    );
    this.#respawnTimer = setTimeout(() => {
      this.#respawnTimer = undefined;
      if (!this.#stopping && !this.#stopped) this.#spawn('crash');
    }, verdict.delayMs);
  }

  #stop(slot: Slot, reason: 'restart' | 'shutdown'): void {
    if (slot === this.#active) {
      this.#active = undefined;
      this.#watchdog = undefined;
    }
    slot.planned = true;
    const { worker } = slot;
    worker.send({ type: 'syncd:drain', reason }, undefined, () => worker.kill('SIGKILL'));
    slot.cancelDeadline?.();
    slot.cancelDeadline = this.#clock.deadline(this.#options.settings.drainTimeoutMs + KILL_MARGIN_MS, () => {
      this.#log.warn({ workerPid: worker.pid }, 'worker did not stop within the drain timeout; killing it');
      worker.kill('SIGKILL', 'it did not stop within the drain timeout');
    });
  }

  #kill(slot: Slot, signal: NodeJS.Signals): void {
    slot.planned = true;
    slot.worker.kill(signal);
  }

  /** Sends to every worker but `except`. */
  #broadcast(message: SupervisorMessage, except?: Slot): void {
    for (const slot of this.#slots.values()) if (slot !== except) slot.worker.send(message);
  }

  #finishIfStopped(): void {
    if (this.#stopping && this.#slots.size === 0) this.#finish(this.#stopping.exitCode);
  }

  #finish(exitCode: number): void {
    if (this.#stopped) return;
    this.#stopped = true;
    clearInterval(this.#heartbeatTimer);
    this.#clock.stop();
    for (const slot of this.#slots.values()) slot.cancelDeadline?.();
    this.#log.info({ exitCode }, 'supervisor stopped');
    this.#resolveDone(exitCode);
  }
}
