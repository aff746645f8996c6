import { createServer } from 'node:net';
import { execa } from 'execa';
import getPort from 'get-port';
import t from 'tap';
import { syncthing } from '../../../scripts/bench/targets.ts';
import { ClientError, SyncdClient } from '../../../shared/client/client.ts';
import { isAlive, startService, waitFor } from '../../helpers/service.ts';

const hasSyncthing = (await execa('sh', ['-c', 'command -v syncthing'], { reject: false })).exitCode === 0;
const noSyncthing = hasSyncthing ? false : 'syncthing is not installed (.ci/run installs it from Debian)';

t.test('one typed method per operation against syncd', async (t) => {
  const service = await startService(t);
  const { client } = service;
  t.same(await client.ping(), { ping: 'pong' });
  t.same(await client.errors(), []);
  await client.addError('disk on fire');
  t.same(
    (await client.errors()).map((e) => e.message),
    ['disk on fire'],
  );
  await client.clearErrors();
  t.same(await client.errors(), []);
  const status = await client.status();
  t.equal(typeof status.pid, 'number');
  t.equal(status.supervisor.restarts, 0);
  t.same(await client.restart(), { ok: 'restarting' });
  t.same(await client.shutdown(), { ok: 'shutting down' });
  t.equal((await service.exited).exitCode, 0);
});

t.test('errors carry the HTTP status and the service message', async (t) => {
  const service = await startService(t);
  const wrong = new SyncdClient({ address: service.address, apiKey: 'wrong-key-wrong-key' });
  const error = await wrong.ping().catch((e: unknown) => e);
  t.type(error, ClientError);
  t.match(error, { status: 401, code: undefined, message: /answered 401: missing or wrong API key/ });
  t.match((error as ClientError).body, { statusCode: 401 });
});

t.test('a call that gets no answer fails after its timeout, with a code', async (t) => {
  // Accepts connections and never answers.
  const silent = createServer(() => {});
  const port = await getPort({ host: '127.0.0.1' });
  await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
  t.teardown(() => silent.close());
  const client = new SyncdClient({ address: `127.0.0.1:${port}`, apiKey: 'k', timeoutMs: 300 });
  const started = Date.now();
  const error = await client.ping().catch((e: unknown) => e);
  t.match(error, { name: 'ClientError', code: 'ETIMEDOUT', message: /no answer within 300ms/ });
  t.ok(Date.now() - started < 5000, 'bounded');
  const refused = await new SyncdClient({ address: '127.0.0.1:1' }).ping().catch((e: unknown) => e);
  t.match(refused, {
    code: 'ECONNREFUSED',
    message: /no service answering at 127.0.0.1:1: connection refused/,
  });
});

t.test('the same client works against Syncthing itself', { skip: noSyncthing }, async (t) => {
  const running = await syncthing.start();
  t.teardown(running.stop);
  const client = new SyncdClient({ address: running.url, apiKey: running.apiKey, timeoutMs: 5000 });
  await waitFor(
    'Syncthing to answer',
    async () => ((await client.ping().catch(() => undefined)) ? true : undefined),
    20_000,
  );
  t.same(await client.ping(), { ping: 'pong' });
  await client.clearErrors();
  t.same(await client.errors(), [], "Syncthing's null list comes back as []");
  await client.addError('disk on fire');
  t.same(
    (await client.errors()).map((e) => e.message),
    ['disk on fire'],
  );
  t.ok((await client.status()).myID, 'its own status');
});

t.test("Syncthing's own command-line client works against syncd", { skip: noSyncthing }, async (t) => {
  const service = await startService(t);
  const cli = (...args: string[]) =>
    execa(
      'syncthing',
      ['cli', `--gui-address=${service.address}`, `--gui-apikey=${service.apiKey}`, ...args],
      {
        reject: false,
        timeout: 20_000,
      },
    );
  await service.client.addError('disk on fire');
  const shown = await cli('errors', 'show');
  t.equal(shown.exitCode, 0, shown.stderr);
  t.equal(JSON.parse(shown.stdout).errors[0].message, 'disk on fire');
  t.equal((await cli('errors', 'clear')).exitCode, 0);
  t.same(await service.client.errors(), []);
  t.equal(JSON.parse((await cli('show', 'system')).stdout).pid, await service.workerPid());

  const before = await service.workerPid();
  t.equal((await cli('operations', 'restart')).exitCode, 0);
  await waitFor('a new worker', async () =>
    (await service.workerPid().catch(() => before)) !== before ? true : undefined,
  );
  t.equal((await cli('operations', 'shutdown')).exitCode, 0);
  t.equal((await service.exited).exitCode, 0);
  t.notOk(isAlive(service.supervisorPid!));
});
