import t from 'tap';
import { startService } from 'syncd/testing';

t.test('the service comes back at once after a restart', async (t) => {
  const service = await startService();
  t.teardown(service.stop);

  t.same(await service.client.ping(), { ping: 'pong' });
  const before = await service.workerPid();

  t.same(await service.client.restart(), { ok: 'restarting' });
  await service.waitForLog((line) => line.msg === 'worker ready');
  t.not(await service.workerPid(), before);
  t.equal((await service.client.status()).supervisor.restarts, 1);
});
