// The worker process: serves HTTP on the connections its supervisor hands over, until told to stop.
import { PARENT_DEATH_SIGNAL_ENV } from '../shared/ipc/protocol.ts';
import { standardOutput } from '../shared/logger.ts';
import { guardAgainstOrphaning } from './orphan-guard.ts';
import { runWorker } from './run.ts';
import { TEST_ROUTES_ENV } from './http/routes/test.ts';

if (!process.send) {
  process.stderr.write('syncd worker: start the supervisor (npm start); the worker needs its IPC channel\n');
  process.exit(1);
}

// A terminal's Ctrl-C, a hang-up and systemd's stop signal the whole process group. The supervisor
// decides what they mean and tells its worker over IPC: the worker itself must not die of them.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => {});

// A worker whose supervisor has gone must not live on as an orphan.
process.on('disconnect', () => process.exit(0));
const diesWithSupervisor = process.env[PARENT_DEATH_SIGNAL_ENV] === 'KILL';
delete process.env[PARENT_DEATH_SIGNAL_ENV];

// The supervisor reports the last stderr line of a crashed worker: make it the one that says why.
process.on('uncaughtException', (error) => {
  process.stderr.write(`${error.stack ?? error}\nworker crashed: uncaught ${error.name}: ${error.message}\n`);
  process.exit(1);
});

await runWorker(process as Parameters<typeof runWorker>[0], {
  testRoutes: process.env[TEST_ROUTES_ENV] === '1',
  // Once ready: its thread's start would compete with the worker's own on a small machine, and until
  // then a supervisor that is gone closes the channel of a worker whose loop is free to see it.
  // Not when the kernel kills it with its supervisor already (see PARENT_DEATH_SIGNAL_ENV).
  onReady: () => {
    if (diesWithSupervisor) return;
    guardAgainstOrphaning((error) =>
      process.stderr.write(
        `syncd worker: the orphan guard failed (${error.message}); a blocked worker may outlive its supervisor\n`,
      ),
    );
  },
});
await standardOutput().flush(1000);
process.exit(0);
