import { accessSync, constants } from 'node:fs';
import type { Socket } from 'node:net';
import { delimiter, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import type { LossyOutput } from '../shared/lossy-output.ts';
import { isWorkerMessage, PARENT_DEATH_SIGNAL_ENV, type SupervisorMessage } from '../shared/ipc/protocol.ts';
import { LastLine } from './last-line.ts';
import type { WorkerEvents, WorkerHandle } from './worker-handle.ts';

// The worker entry beside this file's folder, with this file's own extension: worker/main.ts from the
// sources, dist/worker/main.js from any output folder of the build (see scripts/build.ts).
const defaultEntry = fileURLToPath(new URL(`../worker/main${extname(import.meta.url)}`, import.meta.url));

/**
 * V8 flags for the supervisor alone: its young generation capped at 1 MiB a half, where V8 would grow
 * it to 16 MiB a half from the garbage each spawn leaves (a restart storm took it from 56 to 93 MB).
 */
export const SUPERVISOR_ONLY_FLAGS = ['--max-semi-space-size'];

/**
 * V8 flags for the worker (its threads share them). Functions are optimized once they have run four
 * times as long as V8's default asks (its interrupt budget, 66 KiB of bytecode, raised to 256 KiB): a
 * new worker's work comes in bursts (a first scan, a restart's index), and V8 optimized some 65
 * functions during one first scan, on background threads that took about 200 ms of the two cores'
 * time, a fifth of the scan's; the hot loops are still optimized, a little later. The old generation
 * grows by a fifth of what survives a full collection, not up to four times as much (V8's default
 * when it allocates fast): indexing or sending 100,000 files keeps 30 to 60 MB alive but made the
 * heap grow to 200 MB of garbage (a peak of 272 to 295 MB, 185 to 207 MB so, for 0.3 s more of
 * indexing's 7 s). Measured in docs/perf-notes/ (indexing; 2026-11-27); a flag given to the
 * supervisor comes after these and wins.
 */
export const WORKER_FLAGS = ['--interrupt-budget=262144', '--heap-growing-percent=20'];

export interface WorkerProcessOptions {
  entry?: string;
  env?: NodeJS.ProcessEnv;
  /** Where the worker's stderr is copied: never blocking, whatever the reader does. */
  stderr?: LossyOutput;
}

/**
 * A worker started before the supervisor is ready for it: Node's start and the loading of the worker's
 * code overlap the supervisor's own (the worker does nothing until its init). The first spawn adopts it.
 */
export interface EarlyWorker {
  readonly pid: number;
  /** The running process, reporting to `events` from now on (what it reported before is replayed). */
  adopt(events: WorkerEvents, options?: Pick<WorkerProcessOptions, 'stderr'>): WorkerHandle;
  /** Ends it: the supervisor will not start (--help, a bad setting, a home in use). */
  discard(): void;
}

export function startWorkerEarly(options: WorkerProcessOptions = {}): EarlyWorker {
  const queued: Array<(events: WorkerEvents) => void> = [];
  let target: WorkerEvents | undefined;
  const later: WorkerEvents = {
    onMessage: (worker, message) =>
      target ? target.onMessage(worker, message) : queued.push((events) => events.onMessage(worker, message)),
    onExit: (worker, exit) =>
      target ? target.onExit(worker, exit) : queued.push((events) => events.onExit(worker, exit)),
  };
  const worker = new WorkerProcess(later, options);
  return {
    pid: worker.pid,
    adopt(events, { stderr } = {}) {
      worker.copyStderrTo(stderr);
      // After the caller has the handle (it registers it as it returns): an exit while it was loading,
      // reported during adopt(), would concern a worker the supervisor does not know yet.
      queueMicrotask(() => {
        for (const replay of queued.splice(0)) replay(events);
        target = events;
      });
      return worker;
    },
    discard: () => worker.kill('SIGKILL', 'the supervisor did not start'),
  };
}

/**
 * util-linux's setpriv, where the machine has it: the worker is started through it with a parent-death
 * signal (prctl's PR_SET_PDEATHSIG, kept across its exec of node), so that the kernel kills a worker
 * whose supervisor is gone, even one whose event loop is blocked. Elsewhere the worker watches its
 * parent from a thread of its own, which costs a start of ~120 ms of CPU and its memory.
 */
const setpriv = process.platform === 'linux' ? onPath('setpriv') : undefined;

function onPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return join(dir, command);
    } catch {
      // Not in this one.
    }
  }
  return undefined;
}

/**
 * Starts the worker process. Its own function so that the field holding the child takes the type
 * inferred here: relating execa's generic result types to one another costs the type checker seconds.
 */
/** The worker's libuv pool, unless UV_THREADPOOL_SIZE says otherwise. */
export const WORKER_THREADPOOL_SIZE = 16;

function spawnWorker(options: WorkerProcessOptions) {
  const node = [
    // The supervisor's own V8 flags (a small young generation, see package.json's start) are not the
    // worker's: it has its own. Others (--cpu-prof, --inspect) go on to it as Node passes them.
    ...WORKER_FLAGS,
    ...process.execArgv.filter((flag) => !SUPERVISOR_ONLY_FLAGS.some((only) => flag.startsWith(only))),
    options.entry ?? defaultEntry,
  ];
  const [file, args] = setpriv
    ? [setpriv, ['--pdeathsig', 'KILL', process.execPath, ...node]]
    : [process.execPath, node];
  return execa(file, args, {
    // Handles (the accepted sockets) travel with Node's own send(); execa's IPC helpers carry none.
    ipc: true,
    serialization: 'json',
    stdin: 'ignore',
    stdout: 'inherit',
    stderr: 'pipe',
    buffer: false,
    reject: false,
    // The supervisor ends its workers itself, in order; a worker also exits when its channel closes.
    cleanup: false,
    env: {
      // libuv's pool runs every file call, and DNS lookups: four threads, the default, are all held by
      // four calls on a dead mount or four slow lookups, and then each folder's root probe waits too
      // (root-probe.ts). Set in the environment, as libuv reads it once, at the pool's first use.
      UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? String(WORKER_THREADPOOL_SIZE),
      ...options.env,
      ...(setpriv ? { [PARENT_DEATH_SIGNAL_ENV]: 'KILL' } : {}),
    },
  });
}

/** One worker child process, spoken to over its IPC channel. */
export class WorkerProcess implements WorkerHandle {
  readonly pid: number;
  #exited = false;
  #killReason: string | undefined;
  readonly #child: ReturnType<typeof spawnWorker>;
  readonly #stderr = new LastLine();
  #stderrCopy: LossyOutput | undefined;

  constructor(events: WorkerEvents, options: WorkerProcessOptions = {}) {
    this.#stderrCopy = options.stderr;
    this.#child = spawnWorker(options);
    this.pid = this.#child.pid ?? -1;

    this.#child.stderr?.on('data', (chunk: Buffer) => {
      this.#stderrCopy?.write(chunk);
      this.#stderr.push(chunk.toString('utf8'));
    });
    this.#child.on('message', (message: unknown) => {
      if (isWorkerMessage(message)) events.onMessage(this, message);
    });

    const reportExit = (code: number | null, signal: NodeJS.Signals | null, error?: Error) => {
      if (this.#exited) return;
      this.#exited = true;
      // The last stderr chunk may still be in the pipe when 'exit' fires; 'close' comes after it.
      const report = () =>
        events.onExit(this, {
          code,
          signal,
          lastStderrLine: this.#stderr.value,
          error,
          killReason: this.#killReason,
        });
      if (this.#child.stderr && !this.#child.stderr.closed) this.#child.stderr.once('close', report);
      else report();
    };
    this.#child.once('exit', (code, signal) => reportExit(code, signal));
    this.#child.once('error', (error) => reportExit(null, null, error));
  }

  /** Where its stderr is copied from now on. */
  copyStderrTo(stderr: LossyOutput | undefined): void {
    this.#stderrCopy = stderr;
  }

  send(message: SupervisorMessage, socket?: Socket, onError?: (error: Error) => void): void {
    if (!this.#child.connected) {
      onError?.(new Error(`worker ${this.pid} has no IPC channel any more`));
      return;
    }
    // keepOpen: the supervisor closes its copy itself once the worker has acknowledged the socket.
    this.#child.send(message, socket, { keepOpen: true }, (error) => {
      if (error) onError?.(error);
    });
  }

  kill(signal: NodeJS.Signals, reason?: string): void {
    if (this.#exited) return;
    this.#killReason ??= reason;
    this.#child.kill(signal);
  }
}
