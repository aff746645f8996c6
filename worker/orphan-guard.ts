import { Worker } from 'node:worker_threads';

// Runs in a thread of its own, whose event loop the worker's cannot block: a worker stuck in a
// loop never sees its IPC channel close, and would outlive a supervisor killed with SIGKILL.
const guard = `
const { workerData } = require('node:worker_threads');
setInterval(() => {
  if (process.ppid !== workerData.supervisorPid) process.kill(process.pid, 'SIGKILL');
}, workerData.everyMs);
`;

/**
 * Kills this process once its supervisor is gone, even while this process's event loop is blocked:
 * a thread checks the parent pid, which changes when the parent dies (the process is adopted).
 */
export function guardAgainstOrphaning(onError: (error: Error) => void, everyMs = 200): void {
  const thread = new Worker(guard, {
    eval: true,
    workerData: { supervisorPid: process.ppid, everyMs },
    stdout: false,
    stderr: false,
  });
  // Losing the guard costs the guarantee, not the worker: the IPC channel's close still ends it.
  thread.on('error', onError);
  thread.unref();
}
