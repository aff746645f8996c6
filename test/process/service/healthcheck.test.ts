import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import getPort from 'get-port';
import t from 'tap';
import { call, type Service, startService } from '../../helpers/service.ts';
import { healthcheckScript, packageRoot } from '../../../shared/paths.ts';

const [root, script] = [packageRoot, healthcheckScript];

/** Runs the health check as a container does, with nothing but the environment (and its flags) given. */
async function healthcheck(env: Record<string, string>, viaNpm = false, args: string[] = []) {
  const started = Date.now();
  const result = await execa(
    viaNpm ? 'npm' : 'node',
    viaNpm ? ['run', '--silent', 'healthcheck', '--', ...args] : [script, ...args],
    {
      cwd: root,
      env: { SYNCD_ADDRESS: '', SYNCD_API_KEY: '', SYNCD_HOME: '', ...env },
      extendEnv: true,
      reject: false,
      timeout: 20_000,
    },
  );
  return { exitCode: result.exitCode, output: `${result.stdout}${result.stderr}`, ms: Date.now() - started };
}

// One service for the tests that leave it as they found it; the others start their own.
let shared: Promise<Service> | undefined;
const sharedService = () => (shared ??= startService(t));

t.test(
  'healthy: address and key from the environment, as `node <file>` and `npm run healthcheck`',
  async (t) => {
    const service = await sharedService();
    const env = { SYNCD_ADDRESS: service.address, SYNCD_API_KEY: service.apiKey };
    const direct = await healthcheck(env);
    t.equal(direct.exitCode, 0, direct.output);
    t.match(direct.output, /healthy: pong from/);
    t.equal((await healthcheck(env, true)).exitCode, 0, 'through npm run');
    const sync = await healthcheck(env, false, ['--sync']);
    t.equal(sync.exitCode, 0, sync.output);
    t.match(sync.output, /healthy: pong from .*; listening for devices at tcp:\/\/127\.0\.0\.1:[1-9]\d*$/);
    const misspelt = await healthcheck(env, false, ['--snyc']);
    t.equal(misspelt.exitCode, 1, 'an unknown flag is not taken for the plain check');
    t.match(misspelt.output, /unknown argument --snyc/);
  },
);

t.test('with --sync, unhealthy while the sync port is held by another program', async (t) => {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => holder.close(resolve)));
  const syncAddress = `tcp://127.0.0.1:${(holder.address() as AddressInfo).port}`;
  const service = await startService(t, { env: { SYNCD_SYNC_ADDRESS: syncAddress } });
  const env = { SYNCD_ADDRESS: service.address, SYNCD_API_KEY: service.apiKey };
  t.equal((await healthcheck(env)).exitCode, 0, 'the plain check sees the REST interface only');
  for (const [how, result] of [
    ['--sync', await healthcheck(env, false, ['--sync'])],
    ['SYNCD_HEALTHCHECK_SYNC=1', await healthcheck({ ...env, SYNCD_HEALTHCHECK_SYNC: '1' })],
  ] as const) {
    t.equal(result.exitCode, 1, `${how}: ${result.output}`);
    t.match(
      result.output,
      new RegExp(`unhealthy: pong from .*, but sync listener ${syncAddress} is not listening: .*in use`),
      how,
    );
  }
});

t.test('healthy: address and key from the home alone', async (t) => {
  const service = await startService(t, { env: { SYNCD_API_KEY: '' } });
  const result = await healthcheck({ SYNCD_HOME: service.home });
  t.equal(result.exitCode, 0, result.output);
});

t.test('a wildcard listening address is checked through loopback', async (t) => {
  const service = await startService(t);
  const port = service.address.split(':')[1];
  const result = await healthcheck({ SYNCD_ADDRESS: `0.0.0.0:${port}`, SYNCD_API_KEY: service.apiKey });
  t.equal(result.exitCode, 0, result.output);
});

t.test('unhealthy when nothing answers, with the address named', async (t) => {
  const port = await getPort({ host: '127.0.0.1' });
  const result = await healthcheck({ SYNCD_ADDRESS: `127.0.0.1:${port}`, SYNCD_API_KEY: 'x'.repeat(20) });
  t.equal(result.exitCode, 1);
  t.match(
    result.output,
    new RegExp(`unhealthy: no service answering at 127.0.0.1:${port}: connection refused`),
  );
});

t.test('unhealthy with a wrong key', async (t) => {
  const service = await sharedService();
  const result = await healthcheck({ SYNCD_ADDRESS: service.address, SYNCD_API_KEY: 'wrong-key-0123456789' });
  t.equal(result.exitCode, 1);
  t.match(result.output, /401/);
});

t.test('unhealthy within 2 s when the service accepts but never answers', async (t) => {
  const service = await startService(t, { env: { SYNCD_TEST_ROUTES: '1', SYNCD_HEARTBEAT_TIMEOUT: '1m' } });
  await call(service, 'POST', '/rest/test/block');
  const result = await healthcheck({ SYNCD_ADDRESS: service.address, SYNCD_API_KEY: service.apiKey });
  t.equal(result.exitCode, 1);
  // The check's own timeout is 2 s; the bound leaves room for a slow start on a loaded machine, and
  // still tells giving up from hanging (the worker stays blocked for a minute).
  t.ok(result.ms < 2000 + 5000, `gave up after ${result.ms}ms (2 s timeout plus process start)`);
});

t.test('with no key anywhere it says where to put one', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'syncd-hc-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  const port = await getPort({ host: '127.0.0.1' });
  const result = await healthcheck({ SYNCD_HOME: home, SYNCD_ADDRESS: `127.0.0.1:${port}` });
  t.equal(result.exitCode, 1);
  t.match(result.output, /no API key found/);
});
