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

/** A process's use of the machine (GET /rest/system/status `usage`, syncd's own). */
export interface ProcessUsage {
  pid: number;
  /** CPU time used since the process started (user and system), in seconds. */
  cpuSeconds: number;
  /** Resident memory, in bytes. */
  rss: number;
}

/** What ignore lines would leave out of a folder (POST /rest/syncd/ignores/preview). */
export interface IgnorePreview {
  /** The ignored names, in walk order, the first SHOWN_IGNORED of them. */
  ignored: string[];
  /** How many names the walk found ignored. */
  total: number;
  /** How many names the walk looked at, ignored or not. */
  scanned: number;
  /** The walk stopped at its bound: the folder holds more. */
  truncated: boolean;
}

/** A folder's conflict copies by the file each is a copy of (GET /rest/syncd/conflicts). */
export interface ConflictCopies {
  conflicts: Array<{
    original: string;
    /** The original as this device's index has it now; null when it is gone. */
    current: { size: number; modified: string } | null;
    /** `device`: the short ID in the copy's name, of the device whose version won ('' without one). */
    copies: Array<{ name: string; size: number; modified: string; device: string }>;
  }>;
  truncated: boolean;
}
