// The home belongs to one service at a time, and cleaning it up never turns a clean stop into a failure.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import t from 'tap';
import { call, startService, syncdBin } from '../../helpers/service.ts';

async function tempHome(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'syncd-home-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  return home;
}

t.test(
  'a second service on a live home stops with code 2 naming the first, and touches nothing',
  async (t) => {
    const home = await tempHome(t);
    const first = await startService(t, { home });
    const addressFile = await readFile(join(home, 'address'), 'utf8');
    const second = await execa(process.execPath, [syncdBin, 'serve'], {
      env: { SYNCD_HOME: home, SYNCD_ADDRESS: '127.0.0.1:0', SYNCD_API_KEY: first.apiKey },
      reject: false,
      timeout: 20_000,
    });
    t.equal(second.exitCode, 2);
    t.match(JSON.parse(second.stdout.trim()), {
      level: 60,
      msg: new RegExp(
        `--home / SYNCD_HOME: ${home} is in use by another syncd \\(supervisor pid ${first.supervisorPid}\\)`,
      ),
    });
    t.equal(
      await readFile(join(home, 'address'), 'utf8'),
      addressFile,
      "the first one's address file is left as it was",
    );
    t.same(await first.client.ping(), { ping: 'pong' }, 'and the first one serves on');
    await first.client.shutdown();
    t.equal((await first.exited).exitCode, 0);
    await t.rejects(stat(join(home, 'lock')), { code: 'ENOENT' }, 'its lock is gone with it');
    await t.rejects(stat(join(home, 'address')), { code: 'ENOENT' });
  },
);

t.test('a lock left by a process that is gone is taken over', async (t) => {
  const home = await tempHome(t);
  // The pid of a process that has ended.
  const gone = spawn('true');
  await new Promise((resolve) => gone.once('exit', resolve));
  await writeFile(join(home, 'lock'), `${JSON.stringify({ pid: gone.pid, start: '1' })}\n`);
  const service = await startService(t, { home });
  t.same(await service.client.ping(), { ping: 'pong' });
  t.equal(JSON.parse(await readFile(join(home, 'lock'), 'utf8')).pid, service.supervisorPid);
  // A pid that runs now but started at another time is another process (a container restarted).
  await service.stop();
  await writeFile(join(home, 'lock'), `${JSON.stringify({ pid: process.pid, start: '1' })}\n`);
  const again = await startService(t, { home });
  t.same(await again.client.ping(), { ping: 'pong' }, 'a reused pid is no owner');
});

t.test('a home replaced by a file while the service runs: the shutdown is still clean, exit 0', async (t) => {
  const parent = await tempHome(t);
  const home = join(parent, 'home');
  const service = await startService(t, { home });
  await rename(home, join(parent, 'moved'));
  await writeFile(home, 'not a folder');
  t.equal((await call(service, 'POST', '/rest/system/shutdown')).status, 200);
  t.equal(
    (await service.exited).exitCode,
    0,
    'what it wrote into the home is gone with it: nothing to fail on',
  );
});
