import type { Socket } from 'node:net';
import type { SupervisorMessage, WorkerMessage } from '../shared/ipc/protocol.ts';

/** What the supervisor needs of a worker: a real child process (WorkerProcess), or a fake in tests. */
export interface WorkerHandle {
  readonly pid: number;
  /** Sends a message, with the socket as its handle for `syncd:connection`. */
  send(message: SupervisorMessage, socket?: Socket, onError?: (error: Error) => void): void;
  /** Ends the process; `reason` is said in the report of its exit. Does nothing once it has exited. */
  kill(signal: NodeJS.Signals, reason?: string): void;
}

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The line of its stderr that says why it ended, if any (see LastLine). */
  lastStderrLine: string | undefined;
  /** Set when the process could not be started at all. */
  error?: Error;
  /** Why the supervisor killed it, if it did. */
  killReason?: string;
}

/** What a worker reports to the supervisor: its messages, and its exit once. */
export interface WorkerEvents {
  onMessage(worker: WorkerHandle, message: WorkerMessage): void;
  onExit(worker: WorkerHandle, exit: WorkerExit): void;
}

export type SpawnWorker = (events: WorkerEvents) => WorkerHandle;

/** One sentence saying how a worker ended, for the log and the recent errors. */
export function describeExit(pid: number, exit: WorkerExit): string {
  const how = exit.error
    ? `could not be started (${exit.error.message})`
    : exit.signal
      ? `was killed by ${exit.signal}${exit.killReason ? ` because ${exit.killReason}` : ''}`
      : `exited with code ${exit.code}`;
  const said = exit.lastStderrLine ? `; its last stderr line: ${exit.lastStderrLine}` : '';
  return `worker ${pid} ${how}${said}`;
}
