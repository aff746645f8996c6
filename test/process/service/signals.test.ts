// Signals as people and service managers deliver them: to the whole process group, through npm, in the
// first moments of a start, and a supervisor killed outright.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import t from 'tap';
import { call, isAlive, startService, syncdBin, waitFor } from '../../helpers/service.ts';
import { hasSetpriv } from '../../helpers/syncthing.ts';

const testRoutes = { SYNCD_TEST_ROUTES: '1' };

for (const viaNpm of [false, true]) {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    t.test(
      `${signal} to the whole process group${viaNpm ? ' of npm start' : ''}: the request in flight is answered, exit 0`,
      async (t) => {
        const service = await startService(t, { env: testRoutes, detached: true, viaNpm });
        const workerPid = await service.workerPid();
        const slow = call(service, 'GET', '/rest/test/slow?ms=1500&chunks=3');
        await sleep(200);
        // As Ctrl-C in a terminal or systemd's KillMode=control-group: every process of the group at once.
        process.kill(-(service.process.pid as number), signal);
        const response = await slow;
        t.equal(response.status, 200, 'answered');
        t.match(response.body, /done after 1500ms/, 'in full');
        t.equal((await service.exited).exitCode, 0, `${viaNpm ? 'npm' : 'the supervisor'} exits 0`);
        t.notOk(
          service.logs.some((line) => line.msg === 'stopping at once: every worker is killed'),
          'the signal delivered twice (npm forwards it) is one stop',
        );
        await waitFor('the worker gone', async () => (isAlive(workerPid) ? undefined : true), 5000);
      },
    );
  }
}

t.test('SIGHUP to the whole process group restarts the worker, which does not die of it', async (t) => {
  const service = await startService(t, { detached: true });
  const old = await service.workerPid();
  process.kill(-(service.process.pid as number), 'SIGHUP');
  await service.waitForLog((line) => line.msg === 'worker ready');
  t.not(await service.workerPid(), old, 'a new worker serves');
  const status = (await call(service, 'GET', '/rest/system/status')).body;
  t.same([status.supervisor.restarts, status.supervisor.crashes], [1, 0], 'a restart, not a crash');
});

// SIGHUP, SIGINT and SIGTERM as bits of /proc/PID/status's SigCgt (signal n is bit n - 1).
const caughtMask = (1n << 0n) | (1n << 1n) | (1n << 14n);
function catches(pid: number): boolean {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const caught = BigInt(`0x${/^SigCgt:\s*([0-9a-f]+)/m.exec(status)?.[1] ?? '0'}`);
    return (caught & caughtMask) === caughtMask;
  } catch {
    return false;
  }
}

t.test(
  'the supervisor catches signals before it loads anything; one in its first moments is acted on',
  async (t) => {
    for (const signal of ['SIGHUP', 'SIGTERM'] as const) {
      // Without the test runner's NODE_OPTIONS: its loader would catch signals before syncd runs. `env`
      // execs node in its own place, so the pid is the supervisor's.
      const child = execa('env', ['-u', 'NODE_OPTIONS', process.execPath, syncdBin, 'serve'], {
        env: {
          SYNCD_HOME: t.testdir(),
          SYNCD_ADDRESS: '127.0.0.1:0',
          SYNCD_SYNC_ADDRESS: 'tcp://127.0.0.1:0',
          SYNCD_API_KEY: 'a-key-for-the-early-signals',
        },
        reject: false,
        stdin: 'ignore',
      });
      t.teardown(() => child.kill('SIGKILL'));
      let output = '';
      child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const pid = child.pid as number;
      while (!catches(pid) && child.exitCode === null) await new Promise((resolve) => setImmediate(resolve));
      t.equal(output, '', `${signal}: caught before the first line, that is before the supervisor is loaded`);
      process.kill(pid, signal);
      if (signal === 'SIGTERM') {
        const result = await child;
        t.equal(result.exitCode, 0, 'SIGTERM at start: exit code 0, not status 143');
        t.equal(result.signal, undefined);
      } else {
        await waitFor('ready', async () => (/"msg":"ready"/.test(output) ? true : undefined)).catch(
          (error) => {
            throw new Error(
              `${error.message}; it wrote: ${output}; exit ${child.exitCode} ${child.signalCode}`,
            );
          },
        );
        t.ok(isAlive(pid), 'SIGHUP at start did not kill it');
        process.kill(pid, 'SIGTERM');
        t.equal((await child).exitCode, 0);
      }
    }
  },
);

// Through setpriv's parent-death signal where the machine has it, else the worker's own thread (a PATH
// without setpriv); both are tried where it is here.
for (const watcher of ['the kernel (setpriv)', "the worker's own thread"]) {
  const withoutSetpriv = watcher !== 'the kernel (setpriv)';
  t.test(
    `a worker with a blocked event loop dies with its supervisor, killed outright: by ${watcher}`,
    { skip: hasSetpriv || withoutSetpriv ? false : 'no setpriv on this machine' },
    async (t) => {
      // A heartbeat timeout long enough that only the supervisor's death can end the worker.
      const env = {
        ...testRoutes,
        SYNCD_HEARTBEAT_TIMEOUT: '1m',
        ...(withoutSetpriv ? { PATH: '/nonexistent' } : {}),
      };
      const service = await startService(t, { env });
      const pid = await service.workerPid();
      const environment = await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '');
      t.equal(environment.split('\0').includes('SYNCD_PARENT_DEATH_SIGNAL=KILL'), !withoutSetpriv, watcher);
      t.equal((await call(service, 'POST', '/rest/test/block')).status, 200);
      await sleep(200);
      service.process.kill('SIGKILL');
      await service.exited;
      const killedAt = Date.now();
      await waitFor('the blocked worker gone', async () => (isAlive(pid) ? undefined : true), 5000);
      t.pass(`gone after ${Date.now() - killedAt} ms`);
    },
  );
}
