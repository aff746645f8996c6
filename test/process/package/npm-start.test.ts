import { readFile } from 'node:fs/promises';
import { execa } from 'execa';
import t from 'tap';
import { call, isAlive, startService, supervisorPids, waitFor } from '../../helpers/service.ts';

t.test(
  '`npm start` runs `syncd serve`, npx syncd talks to it, and SIGTERM to npm ends the whole tree gracefully',
  async (t) => {
    const service = await startService(t, { viaNpm: true, env: { SYNCD_TEST_ROUTES: '1' } });
    const npmPid = service.process.pid!;
    const [supervisorPid] = supervisorPids(service.logs);
    const workerPid = (await call(service, 'GET', '/rest/system/status')).body.pid;
    t.not(supervisorPid, npmPid, 'npm runs the supervisor as its child');
    const commandLine = (pid: number) =>
      readFile(`/proc/${pid}/cmdline`, 'utf8').then((text) => text.split('\0'));
    t.ok((await commandLine(supervisorPid!)).includes('--max-semi-space-size=1'), "the supervisor's V8 flag");
    t.notOk(
      (await commandLine(workerPid)).some((arg) => arg.startsWith('--max-semi-space-size')),
      'is not passed on to the worker',
    );
    const npx = await execa(
      'npx',
      ['--no-install', 'syncd', 'ping', '--address', service.address, '--api-key', service.apiKey],
      { reject: false },
    );
    t.equal(npx.exitCode, 0, `npx syncd works from a checkout: ${npx.stderr}`);

    const slow = call(service, 'GET', '/rest/test/slow?ms=1500&chunks=3');
    await new Promise((resolve) => setTimeout(resolve, 200));
    process.kill(npmPid, 'SIGTERM');

    const response = await slow;
    t.equal(response.status, 200, 'the request in flight is answered');
    t.match(response.body, /done after 1500ms/);
    const { exitCode } = await service.exited;
    t.equal(exitCode, 0, 'npm exits 0, after the supervisor');
    t.ok(
      service.logs.some(
        (line) => line.role === 'supervisor' && line.msg === 'shutting down' && line.reason === 'SIGTERM',
      ),
      'the supervisor got SIGTERM',
    );
    t.ok(service.logs.some((line) => line.msg === 'supervisor stopped' && line.exitCode === 0));
    for (const pid of [supervisorPid!, workerPid]) {
      await waitFor(`process ${pid} gone`, async () => (isAlive(pid) ? undefined : true), 5000);
    }
    t.pass('no process is left behind');
  },
);
