// Shapes of the REST interface that the supervisor, the worker and the client share (the IPC
// messages carry some of them too).

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
