import t from 'tap';
import { startPingers } from '../../scripts/bench/pingers.ts';
import { call, isAlive, type Service, startService, waitFor } from '../helpers/service.ts';

const testRoutes = { SYNCD_TEST_ROUTES: '1' };

async function workerPid(service: Service): Promise<number> {
  return (await call(service, 'GET', '/rest/system/status')).body.pid;
}

/** Resolves with the serving worker's pid once it differs from `old`. */
function nextWorker(service: Service, old: number, timeoutMs?: number): Promise<number> {
  return waitFor(
    `a worker other than ${old}`,
    async () => {
      const pid = await workerPid(service).catch(() => old);
      return pid !== old ? pid : undefined;
    },
    timeoutMs,
  );
}

t.test('5 restarts in a row while 4 clients ping every 10 ms: no ping fails', async (t) => {
  const service = await startService(t);
  // Two clients keep their connection alive across pings, two open one per ping.
  const kept = startPingers({
    url: service.url,
    apiKey: service.apiKey,
    clients: 2,
    intervalMs: 10,
    keepAlive: true,
  });
  const fresh = startPingers({
    url: service.url,
    apiKey: service.apiKey,
    clients: 2,
    intervalMs: 10,
    keepAlive: false,
  });
  let pid = await workerPid(service);
  // More in a row are the benchmark's (npm run bench): this proves the handover, the bench its endurance.
  for (let i = 0; i < 5; i++) {
    t.equal((await call(service, 'POST', '/rest/system/restart')).status, 200);
    pid = await nextWorker(service, pid);
  }
  const reports = [await kept.stop(), await fresh.stop()];
  const failures = reports.flatMap((report) => report.failures);
  t.same(failures, [], 'no refused connection, no reset, no non-200');
  // Pings went on through the restarts (how many depends on how busy the machine is, and the worker
  // runs at low priority).
  t.ok(reports[0]!.ok > 20 && reports[1]!.ok > 20, `pings answered: ${reports[0]!.ok} + ${reports[1]!.ok}`);
  t.ok(reports[0]!.closes > 0, 'keep-alive connections were let go with Connection: close');
  t.equal((await call(service, 'GET', '/rest/system/status')).body.supervisor.restarts, 5);
  t.equal(
    service.logs.filter((line) => line.msg === 'ready').length,
    1,
    'one ready line, for the first worker',
  );
});

for (const how of ['restart', 'shutdown', 'SIGTERM'] as const) {
  t.test(`a request in flight when ${how} arrives is answered in full`, async (t) => {
    const service = await startService(t, { env: testRoutes });
    const slow = call(service, 'GET', '/rest/test/slow?ms=1500&chunks=5');
    await service.waitForLog(() => true); // the service is up; give the request a moment to start
    await new Promise((resolve) => setTimeout(resolve, 200));
    if (how === 'SIGTERM') service.process.kill('SIGTERM');
    else t.equal((await call(service, 'POST', `/rest/system/${how}`)).status, 200);
    const response = await slow;
    t.equal(response.status, 200);
    t.match(response.body, /part 5 of 5\ndone after 1500ms\n$/, 'the whole body');
    if (how !== 'restart') t.equal((await service.exited).exitCode, 0, 'then the supervisor exits 0');
  });
}

t.test('past the drain timeout the request still running is cut, and that is logged', async (t) => {
  const service = await startService(t, { env: { ...testRoutes, SYNCD_DRAIN_TIMEOUT: '500ms' } });
  const old = await workerPid(service);
  const slow = call(service, 'GET', '/rest/test/slow?ms=5000&chunks=50').then(
    () => 'answered',
    (error: NodeJS.ErrnoException) => error.code ?? error.message,
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  await call(service, 'POST', '/rest/system/restart');
  t.not(await slow, 'answered', 'the slow request was cut');
  const line = await service.waitForLog(
    (l) => l.pid === old && /drain timeout passed; cut 1 connections/.test(l.msg),
  );
  t.equal(line.level, 40, 'logged as a warning');
  await waitFor('the old worker gone', async () => (isAlive(old) ? undefined : true));
});

// The rest of the crash policy (backoff, giving up, startup timeouts) is tested in-process with a fake
// worker (test/supervisor/supervisor.test.ts); this proves the wiring with a real one.
t.test('a worker that throws is replaced, and its successor says how it ended', async (t) => {
  const service = await startService(t, { env: testRoutes });
  const pid = await workerPid(service);
  await call(service, 'POST', '/rest/test/crash');
  await nextWorker(service, pid);
  const { errors } = (await call(service, 'GET', '/rest/system/error')).body;
  t.equal(errors.length, 1);
  t.match(
    errors[0].message,
    /exited with code 1; its last stderr line: worker crashed: uncaught Error: crash asked for by a test/,
  );
  t.equal((await call(service, 'GET', '/rest/system/status')).body.supervisor.crashes, 1);
});

t.test('a worker out of memory is replaced and its successor says so', async (t) => {
  const service = await startService(t, { env: { ...testRoutes, NODE_OPTIONS: '--max-old-space-size=48' } });
  const old = await workerPid(service);
  await call(service, 'POST', '/rest/test/oom');
  await nextWorker(service, old);
  const { errors } = (await call(service, 'GET', '/rest/system/error')).body;
  t.match(
    errors[0]?.message,
    new RegExp(
      `worker ${old} was killed by SIGABRT; its last stderr line: FATAL ERROR: .*heap out of memory`,
    ),
  );
});

t.test('a hung worker is killed and replaced, and counts as a crash', async (t) => {
  const service = await startService(t, { env: { ...testRoutes, SYNCD_HEARTBEAT_TIMEOUT: '1s' } });
  const old = await workerPid(service);
  await call(service, 'POST', '/rest/test/block');
  // The worker runs at low priority (options.setLowPriority): on a machine busy with other tests, its
  // loop spins only when it gets a CPU, and only that time counts against it (see watchdog.ts).
  await nextWorker(service, old, 60_000);
  t.notOk(isAlive(old), 'the hung worker is gone');
  const status = (await call(service, 'GET', '/rest/system/status')).body;
  t.equal(status.supervisor.crashes, 1);
  const { errors } = (await call(service, 'GET', '/rest/system/error')).body;
  t.ok(
    errors.some((error: { message: string }) =>
      /killed by SIGKILL because it answered no heartbeat/.test(error.message),
    ),
    'the crash report says why',
  );
});

t.test('a second SIGTERM while draining ends everything at once', async (t) => {
  const service = await startService(t, { env: testRoutes });
  const pid = await workerPid(service);
  const slow = call(service, 'GET', '/rest/test/slow?ms=10000').catch(() => 'cut');
  await new Promise((resolve) => setTimeout(resolve, 200));
  service.process.kill('SIGTERM');
  await service.waitForLog((line) => line.msg === 'worker draining');
  // Within half a second it would be the same stop delivered twice (a process group, npm forwarding).
  await new Promise((resolve) => setTimeout(resolve, 600));
  const secondAt = Date.now();
  service.process.kill('SIGTERM');
  const { exitCode } = await service.exited;
  t.ok(Date.now() - secondAt < 3000, 'at once, not after the 10 s request');
  t.equal(exitCode, 1);
  t.equal(await slow, 'cut');
  await waitFor('the worker gone', async () => (isAlive(pid) ? undefined : true), 3000);
});

// Within milliseconds as a rule (its IPC channel closes); bounded generously, as a loaded machine needs.
t.test('a worker whose supervisor was killed exits, not left as an orphan', async (t) => {
  const service = await startService(t);
  const pid = await workerPid(service);
  service.process.kill('SIGKILL');
  await service.exited;
  const killedAt = Date.now();
  await waitFor('the orphaned worker gone', async () => (isAlive(pid) ? undefined : true), 5000);
  t.pass(`gone after ${Date.now() - killedAt}ms`);
});
