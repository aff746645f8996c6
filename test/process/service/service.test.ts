// The service changing hands between real worker processes: never two holders, a worker that will
// not let go is killed, and HTTP never waits for it.
import t from 'tap';
import { call, isAlive, startService, waitFor } from '../../helpers/service.ts';

t.test('HTTP is ready first; then the service is held, and a restart hands it over', async (t) => {
  const service = await startService(t);
  const held = await service.waitForLog((line) => line.msg === 'service held');
  const order = service.logs.map((line) => line.msg);
  t.ok(
    order.indexOf('ready') < order.indexOf('service held'),
    'the first pong does not wait for the service',
  );
  const first = await service.workerPid();
  t.equal(held.workerPid, first);
  t.same((await call(service, 'GET', '/rest/system/status')).body.service, { held: true });

  await call(service, 'POST', '/rest/system/restart');
  const second = await service.waitForLog((line) => line.msg === 'service held' && line.workerPid !== first);
  t.ok(
    typeof second.gapMs === 'number' && (second.gapMs as number) >= 0,
    `nothing held it for ${second.gapMs} ms`,
  );
  const status = (await call(service, 'GET', '/rest/system/status')).body;
  t.equal(status.pid, second.workerPid, 'the new worker holds it');
  t.same(status.service, { held: true });
});

t.test('a worker that will not release the service is killed, and its successor acquires it', async (t) => {
  const service = await startService(t, { env: { SYNCD_TEST_ROUTES: '1', SYNCD_DRAIN_TIMEOUT: '1s' } });
  await service.waitForLog((line) => line.msg === 'service held');
  const stuck = await service.workerPid();
  await call(service, 'POST', '/rest/test/service?release=hang');
  await call(service, 'POST', '/rest/system/restart');
  const line = await service.waitForLog((l) =>
    /did not release the service within 1000ms; killing it/.test(l.msg),
  );
  t.equal(line.workerPid, stuck);
  await service.waitForLog((l) => l.msg === 'service held' && l.workerPid !== stuck);
  await waitFor('the stuck worker gone', async () => (isAlive(stuck) ? undefined : true), 5000);
  const status = (await call(service, 'GET', '/rest/system/status')).body;
  t.same([status.service, status.supervisor.crashes], [{ held: true }, 0], 'held by its successor; no crash');
});
