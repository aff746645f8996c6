import { access, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import getPort from 'get-port';
import t from 'tap';
// Through the package's own name, as users import it: this checks the export map too.
import { startService } from 'syncd/testing';
import { isAlive, waitFor } from '../../helpers/service.ts';

const fixture = fileURLToPath(new URL('../../fixtures/harness-then-fail.ts', import.meta.url));
const forgotten = fileURLToPath(new URL('../../fixtures/harness-forgotten.ts', import.meta.url));

t.test('startService gives a running service with its client, pids and logs; stop ends it all', async (t) => {
  const service = await startService();
  t.teardown(service.stop);
  t.match(service.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.ok(service.apiKey.length >= 32, 'a fresh key');
  t.same(await service.client.ping(), { ping: 'pong' });
  const workerPid = await service.workerPid();
  t.equal(workerPid, (await service.client.status()).pid);
  t.ok(isAlive(service.supervisorPid!) && isAlive(workerPid));
  t.ok(service.logs.some((line) => line.msg === 'ready'));

  await service.stop();
  t.notOk(isAlive(service.supervisorPid!), 'the supervisor is gone');
  t.notOk(isAlive(workerPid), 'the worker is gone');
  await t.rejects(access(service.home), { code: 'ENOENT' }, 'the home is removed');
});

for (const how of ['fails an assertion', 'throws', 'is killed'] as const) {
  t.test(`a test that ${how} midway leaves no process behind`, async (t) => {
    const arg = { 'fails an assertion': 'fail', throws: 'throw', 'is killed': 'hang' }[how];
    const run = execa('node', ['--import', 'tsx', fixture, arg], { reject: false });
    let output = '';
    run.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const started = await waitFor('the fixture to start its service', async () => {
      const match = /# started (\{.*\})/.exec(output);
      return match ? (JSON.parse(match[1] as string) as { pids: number[]; home: string }) : undefined;
    }).catch(async (error) => {
      run.kill('SIGKILL');
      throw error;
    });
    t.teardown(() => started.pids.forEach((pid) => isAlive(pid) && process.kill(pid, 'SIGKILL')));
    // A runner killed outright cannot remove its service's home (the README says so): this test does.
    t.teardown(() => rm(started.home, { recursive: true, force: true }));
    if (how === 'is killed') run.kill('SIGKILL');
    const result = await run;
    t.not(result.exitCode, 0, 'the test run failed');
    for (const pid of started.pids) {
      await waitFor(`process ${pid} gone`, async () => (isAlive(pid) ? undefined : true), 5000);
    }
    t.pass(`${started.pids.length} processes gone`);
    if (how !== 'is killed') await t.rejects(access(started.home), { code: 'ENOENT' }, 'the home is removed');
  });
}

t.test(
  'a script that forgets stop() still ends by itself, and takes the service and its home along',
  async (t) => {
    const run = execa('node', ['--import', 'tsx', forgotten], { reject: false, timeout: 30_000 });
    const result = await run;
    t.equal(result.exitCode, 0, `it ended on its own${result.timedOut ? ' (it did not: timed out)' : ''}`);
    const match = /# started (\{.*\})/.exec(result.stdout);
    t.ok(match, 'it started a service');
    const started = JSON.parse(match?.[1] ?? '{"pids":[],"home":""}') as { pids: number[]; home: string };
    t.teardown(() => started.pids.forEach((pid) => isAlive(pid) && process.kill(pid, 'SIGKILL')));
    for (const pid of started.pids) {
      await waitFor(`process ${pid} gone`, async () => (isAlive(pid) ? undefined : true), 5000);
    }
    await t.rejects(access(started.home), { code: 'ENOENT' }, 'the home is removed');
  },
);

t.test('the address, url and key are those the service really uses, whatever gave them', async (t) => {
  const port = await getPort({ host: '127.0.0.1' });
  const key = 'a-key-given-on-the-command-line';
  const byFlags = await startService({ args: ['--address', '127.0.0.1:0', '--api-key', key] });
  t.teardown(byFlags.stop);
  t.match(byFlags.address, /^127\.0\.0\.1:\d+$/);
  t.not(byFlags.address, '127.0.0.1:0', 'port 0 is resolved to the port bound');
  t.equal(byFlags.apiKey, key);
  t.same(await byFlags.client.ping(), { ping: 'pong' });
  const byEnv = await startService({ env: { SYNCD_ADDRESS: `127.0.0.1:${port}` } });
  t.teardown(byEnv.stop);
  t.equal(byEnv.address, `127.0.0.1:${port}`);
  t.same(await byEnv.client.ping(), { ping: 'pong' });
  const generated = await startService({ env: { SYNCD_API_KEY: '' } });
  t.teardown(generated.stop);
  t.ok(generated.apiKey.length >= 32, 'a key the service generated is read from its home');
  t.same(await generated.client.ping(), { ping: 'pong' });
});
