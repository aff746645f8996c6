import getPort from 'get-port';
import t from 'tap';
import { runCli } from '../../../scripts/cli/run.ts';
import { call, isAlive, type Service, startService, tryConnect, waitFor } from '../../helpers/service.ts';

// One service for the tests that leave it running as they found it; the others start their own.
let shared: Promise<Service> | undefined;
const sharedService = () => (shared ??= startService(t));

t.test('ping answers pong to GET and POST', async (t) => {
  const service = await sharedService();
  for (const method of ['GET', 'POST']) {
    const response = await call(service, method, '/rest/system/ping');
    t.equal(response.status, 200, `${method} status`);
    t.same(response.body, { ping: 'pong' }, `${method} body`);
    t.equal(response.headers['content-type'], 'application/json; charset=utf-8');
  }
});

t.test('restart replaces the worker and the next ping answers', async (t) => {
  const service = await startService(t);
  const before = (await call(service, 'GET', '/rest/system/status')).body;
  type Event = { id: number; type: string };
  const events = async (since: number) =>
    (await call(service, 'GET', `/rest/events?since=${since}&timeout=0`)).body as Event[];
  const lastSeen = (await events(0)).at(-1)?.id ?? 0;

  const response = await call(service, 'POST', '/rest/system/restart');
  t.equal(response.status, 200);
  t.same(response.body, { ok: 'restarting' });

  const after = await waitFor('a new worker serving', async () => {
    const status = (await call(service, 'GET', '/rest/system/status')).body;
    return status.pid !== before.pid ? status : undefined;
  });
  t.not(after.pid, before.pid, 'a new worker pid');
  t.equal(after.supervisor.pid, before.supervisor.pid, 'the same supervisor');
  t.equal(after.supervisor.restarts, 1, 'one restart counted');
  t.equal(after.supervisor.crashes, 0, 'a restart is no crash');
  t.same((await call(service, 'GET', '/rest/system/ping')).body, { ping: 'pong' });
  // A client polling on with the last id it saw (Syncthing's GUI does) gets the new worker's events.
  t.match(await events(lastSeen), [{ type: 'Starting' }], "the new worker's events, from its start");
  await waitFor('the old worker gone', async () => (isAlive(before.pid) ? undefined : true));
});

t.test('shutdown ends the supervisor with code 0 and the port refuses connections', async (t) => {
  const service = await startService(t);
  const workerPid = (await call(service, 'GET', '/rest/system/status')).body.pid;

  const response = await call(service, 'POST', '/rest/system/shutdown');
  t.equal(response.status, 200);
  t.same(response.body, { ok: 'shutting down' });

  const { exitCode } = await service.exited;
  t.equal(exitCode, 0, 'exit code 0');
  t.equal(await tryConnect(service.address), 'ECONNREFUSED', 'the port refuses');
  t.notOk(isAlive(workerPid), 'the worker is gone');
});

t.test('SIGTERM shuts down gracefully with code 0', async (t) => {
  const service = await startService(t);
  service.process.kill('SIGTERM');
  const { exitCode } = await service.exited;
  t.equal(exitCode, 0);
  t.ok(service.logs.some((line) => line.msg === 'shutting down' && line.reason === 'SIGTERM'));
});

t.test('a wrong key gets 401 and the action is not taken', async (t) => {
  const service = await sharedService();
  const pid = (await call(service, 'GET', '/rest/system/status')).body.pid;
  await call(service, 'POST', '/rest/system/error', { body: 'keep me' });

  for (const [path, key] of [
    ['/rest/system/shutdown', 'wrong-key-wrong-key'],
    ['/rest/system/restart', null],
    ['/rest/system/error/clear', 'wrong-key-wrong-key'],
  ] as const) {
    const response = await call(service, 'POST', path, { key });
    t.equal(response.status, 401, `${path} with key ${key}`);
    t.equal(response.headers['www-authenticate'], 'Bearer');
  }
  // Give a wrongly taken action time to show.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const status = (await call(service, 'GET', '/rest/system/status')).body;
  t.equal(status.pid, pid, 'the same worker serves');
  t.equal(status.supervisor.restarts, 0);
  const messages = (await call(service, 'GET', '/rest/system/error')).body.errors.map(
    (e: { message: string }) => e.message,
  );
  t.equal(messages[0], 'keep me', 'errors not cleared');
  const leaked = service.logs.filter((line) => JSON.stringify(line).includes(service.apiKey));
  t.same(leaked, [], 'the key appears in no log line of either process');
  t.match(messages.slice(1), [/had a missing or wrong API key/], 'and the failures noted once, as a warning');
});

t.test('errors can be posted, listed and cleared', async (t) => {
  const service = await startService(t);
  t.same((await call(service, 'GET', '/rest/system/error')).body, { errors: [] });

  t.equal((await call(service, 'POST', '/rest/system/error', { body: '  disk on fire \n' })).status, 200);
  const { errors } = (await call(service, 'GET', '/rest/system/error')).body;
  t.equal(errors.length, 1);
  t.equal(errors[0].message, 'disk on fire', 'trimmed');
  t.ok(!Number.isNaN(Date.parse(errors[0].when)), 'when is a time');

  t.equal((await call(service, 'POST', '/rest/system/error/clear')).status, 200);
  t.same((await call(service, 'GET', '/rest/system/error')).body, { errors: [] });
});

t.test('a worker killed with SIGKILL is replaced and its successor says how it ended', async (t) => {
  const service = await startService(t);
  const first = (await call(service, 'GET', '/rest/system/status')).body.pid;
  process.kill(first, 'SIGKILL');

  const status = await waitFor('a replacement worker', async () => {
    const body = (await call(service, 'GET', '/rest/system/status')).body;
    return body.pid !== first ? body : undefined;
  });
  t.equal(status.supervisor.crashes, 1, 'counted as a crash');
  t.equal(status.supervisor.restarts, 0, 'not as a restart');
  const { errors } = (await call(service, 'GET', '/rest/system/error')).body;
  t.equal(errors.length, 1, 'one error');
  t.match(errors[0].message, new RegExp(`worker ${first} was killed by SIGKILL`));
  t.ok(
    service.logs.some((line) => line.level === 50 && String(line.msg).includes('killed by SIGKILL')),
    'the crash is logged',
  );
});

t.test('connections made while no worker serves wait for the next one', async (t) => {
  const service = await startService(t);
  const first = (await call(service, 'GET', '/rest/system/status')).body.pid;
  process.kill(first, 'SIGKILL');
  // Sent at once: the worker is gone and its replacement not yet ready, yet the port accepts.
  const pings = await Promise.all(Array.from({ length: 5 }, () => call(service, 'GET', '/rest/system/ping')));
  t.same(
    pings.map((p) => p.status),
    [200, 200, 200, 200, 200],
  );
});

t.test('a connection made the moment the port opens is answered, never left waiting', async (t) => {
  // Found by the benchmark: connections accepted between the bind and the supervisor taking over hung.
  for (let start = 0; start < 3; start++) {
    // A port known beforehand, so that connections are tried before the service has bound it.
    const port = await getPort({ host: '127.0.0.1' });
    const service = await startService(t, { waitReady: false, env: { SYNCD_ADDRESS: `127.0.0.1:${port}` } });
    const hung: string[] = [];
    for (;;) {
      // A connection accepted before the first worker is ready waits for it, which on a loaded
      // machine takes seconds: only one that never gets its answer is hung.
      const outcome = await call(service, 'GET', '/rest/system/ping', { timeoutMs: 30_000 }).then(
        (response) => String(response.status),
        (error: NodeJS.ErrnoException) => error.code ?? error.message,
      );
      if (/no answer in time/.test(outcome)) hung.push(outcome);
      if (outcome === '200') break;
      if (outcome !== 'ECONNREFUSED' && !/no answer/.test(outcome)) t.fail(`unexpected: ${outcome}`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    t.same(hung, [], `start ${start + 1}: every accepted connection answered`);
    await service.stop();
  }
});

t.test(
  'the device ID is in the status, every response, the start line and syncd id, and stays',
  async (t) => {
    const service = await startService(t);
    const status = await call(service, 'GET', '/rest/system/status');
    const myID = status.body.myID as string;
    t.match(myID, /^([A-Z2-7]{7}-){7}[A-Z2-7]{7}$/);
    t.equal(status.headers['x-syncthing-id'], myID, 'X-Syncthing-Id, as Syncthing sends it');
    t.equal(
      (await call(service, 'GET', '/rest/noauth/health')).headers['x-syncthing-id'],
      myID,
      'on every response',
    );
    const started = await service.waitForLog((line) => line.msg === 'supervisor started');
    t.equal(started.myID, myID);
    t.match(started.sync, [/^tcp:\/\/127\.0\.0\.1:[1-9]\d*$/], 'and where devices reach it');
    const out: string[] = [];
    t.equal(
      await runCli(['id', '--home', service.home], { env: {}, out: (text) => out.push(text), err: () => {} }),
      0,
    );
    t.same(out, [myID], 'syncd id');
    await call(service, 'POST', '/rest/system/restart');
    await service.waitForLog((line) => line.msg === 'worker ready');
    t.equal((await call(service, 'GET', '/rest/system/status')).body.myID, myID, 'the same after a restart');
  },
);
