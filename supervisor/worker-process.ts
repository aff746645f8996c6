import type { Socket } from 'node:net';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execaNode } from 'execa';
import { isWorkerMessage, type SupervisorMessage, type WorkerMessage } from '../shared/protocol.ts';
import { LastLine } from './last-line.ts';

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last non-empty line the worker wrote to stderr, if any. */
  lastStderrLine: string | undefined;
  /** Set when the process could not be started at all. */
  error?: Error;
  /** Why the supervisor killed it, if it did. */
  killReason?: string;
}

export interface WorkerEvents {
  onMessage(worker: WorkerProcess, message: WorkerMessage): void;
  onExit(worker: WorkerProcess, exit: WorkerExit): void;
}

// The worker entry beside this file's folder, with this file's own extension: worker/main.ts from the
// sources, dist/worker/main.js from any output folder of the build (see scripts/build.ts).
const defaultEntry = fileURLToPath(new URL(`../worker/main${extname(import.meta.url)}`, import.meta.url));

/** One worker child process, spoken to over its IPC channel. */
export class WorkerProcess {
  readonly pid: number;
  readonly startedAt = Date.now();
  readyAt: number | undefined;
  /** Set once the supervisor has told it to stop: its exit is then planned, never a crash. */
  stopRequested = false;
  exited = false;
  /** Why the supervisor killed it, when it did: said in the crash report. */
  killReason: string | undefined;
  /** When it last answered a heartbeat (or became ready). */
  lastHeartbeat = 0;
  /** Sockets handed over and not yet acknowledged, by id: still whole in the supervisor's hands. */
  readonly unacknowledged = new Map<number, Socket>();
  readonly #child: ReturnType<typeof execaNode>;
  readonly #stderr = new LastLine();

  constructor(events: WorkerEvents, entry = defaultEntry, env: NodeJS.ProcessEnv = {}) {
    this.#child = execaNode(entry, [], {
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
      env,
    });
    this.pid = this.#child.pid ?? -1;

    this.#child.stderr?.on('data', (chunk: Buffer) => {
      process.stderr.write(chunk);
      this.#stderr.push(chunk.toString('utf8'));
    });
    this.#child.on('message', (message: unknown) => {
      if (isWorkerMessage(message)) events.onMessage(this, message);
    });

    const reportExit = (code: number | null, signal: NodeJS.Signals | null, error?: Error) => {
      if (this.exited) return;
      this.exited = true;
      // The last stderr chunk may still be in the pipe when 'exit' fires; 'close' comes after it.
      const report = () =>
        events.onExit(this, {
          code,
          signal,
          lastStderrLine: this.#stderr.value,
          error,
          killReason: this.killReason,
        });
      if (this.#child.stderr && !this.#child.stderr.closed) this.#child.stderr.once('close', report);
      else report();
    };
    this.#child.once('exit', (code, signal) => reportExit(code, signal));
    this.#child.once('error', (error) => reportExit(null, null, error));
  }

  /** Sends a message, with the socket as its handle for `syncd:connection`. */
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
    if (this.exited) return;
    this.killReason ??= reason;
    this.#child.kill(signal);
  }
}

/** One sentence saying how a worker ended, for the log and the next worker's error list. */
export function describeExit(pid: number, exit: WorkerExit): string {
  const how = exit.error
    ? `could not be started (${exit.error.message})`
    : exit.signal
      ? `was killed by ${exit.signal}${exit.killReason ? ` because ${exit.killReason}` : ''}`
      : `exited with code ${exit.code}`;
  const said = exit.lastStderrLine ? `; its last stderr line: ${exit.lastStderrLine}` : '';
  return `worker ${pid} ${how}${said}`;
}
