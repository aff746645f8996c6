// The configuration with real processes: Syncthing's own command-line client against syncd, pause and
// resume persisted across a restart and a new start, the GUI address and key moved by a saved change.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import getPort from 'get-port';
import t from 'tap';
import { call, startService, tryConnect } from '../../helpers/service.ts';
import { newDeviceId } from '../../helpers/config.ts';

const hasSyncthing = (await execa('sh', ['-c', 'command -v syncthing'], { reject: false })).exitCode === 0;

async function tempDir(t: { teardown(fn: () => unknown): void }, prefix = 'syncd-config-') {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

t.test(
  "Syncthing's command-line client works unchanged against syncd",
  { skip: hasSyncthing ? false : 'syncthing is not installed (.ci/run installs it)' },
  async (t) => {
    const service = await startService(t);
    const cwd = await tempDir(t);
    // 1.19's client takes the address without a scheme, and both flags together.
    const cli = async (...args: string[]) => {
      const result = await execa(
        'syncthing',
        ['cli', `--gui-address=${service.address}`, `--gui-apikey=${service.apiKey}`, ...args],
        { cwd, env: { HOME: cwd }, reject: false, timeout: 30_000 },
      );
      t.equal(result.exitCode, 0, `syncthing cli ${args.join(' ')}: ${result.stderr}`);
      return result.stdout;
    };
    const status = JSON.parse(await cli('show', 'system'));
    const myID = status.myID as string;
    t.match(myID, /^[A-Z2-7]{7}(-[A-Z2-7]{7}){7}$/);
    t.match(JSON.parse(await cli('show', 'version')), { version: /^v\d/, longVersion: /^syncd/ });
    t.ok(
      JSON.parse(await cli('show', 'connections')).connections[myID],
      'show connections lists this device',
    );

    const other = newDeviceId();
    await cli('config', 'devices', 'add', '--device-id', other, '--name', 'laptop');
    t.same((await cli('config', 'devices', 'list')).split('\n').sort(), [myID, other].sort());
    const folder = await tempDir(t, 'syncd-folder-');
    await cli('config', 'folders', 'add', '--id', 'docs', '--path', folder);
    t.equal((await cli('config', 'folders', 'list')).trim(), 'docs');
    await cli('config', 'folders', 'docs', 'devices', 'add', '--device-id', other);
    t.same(
      (await cli('config', 'folders', 'docs', 'devices', 'list')).split('\n').sort(),
      [myID, other].sort(),
    );

    const dumped = JSON.parse(await cli('config', 'dump-json'));
    t.match(dumped.folders[0], {
      id: 'docs',
      path: folder,
      markerName: '.stfolder',
      weakHashThresholdPct: 25,
    });
    t.match(
      dumped.devices.find((d: { deviceID: string }) => d.deviceID === other),
      {
        name: 'laptop',
        allowedNetworks: [],
      },
    );
    // What the client saw is what the service serves and has saved.
    const served = (await call(service, 'GET', '/rest/config')).body;
    t.same(served, dumped);
    const file = JSON.parse(await readFile(join(service.home, 'config.json'), 'utf8'));
    t.same(file.config, dumped, 'and what config.json holds');

    // A mistake is the client's error message, and changes nothing.
    const wrong = await execa(
      'syncthing',
      [
        'cli',
        `--gui-address=${service.address}`,
        `--gui-apikey=${service.apiKey}`,
        'config',
        'folders',
        'add',
        '--id',
        'rel',
        '--path',
        'relative/path',
      ],
      { cwd, env: { HOME: cwd }, reject: false, timeout: 30_000 },
    );
    t.not(wrong.exitCode, 0);
    t.match(wrong.stdout + wrong.stderr, /relative\/path\\?" is relative/);
    t.same((await call(service, 'GET', '/rest/config')).body, dumped, 'unchanged');

    // The rest of what the GUI's issue asked of the client: the usage report, the log's facilities, a
    // GUI login set (its password stored hashed), the recent errors.
    t.match(JSON.parse(await cli('show', 'usage')), { urVersion: 3, numFolders: 1, numDevices: 2 });
    t.same(JSON.parse(await cli('show', 'config-status')), { requiresRestart: false });
    await cli('config', 'gui', 'user', 'set', 'admin');
    await cli('config', 'gui', 'password', 'set', 'a long passphrase');
    t.match((await cli('config', 'gui', 'password', 'get')).trim(), /^\$2[aby]\$10\$/, 'stored hashed');
    t.equal((await cli('config', 'gui', 'user', 'get')).trim(), 'admin');
    await cli('errors', 'clear');
    // The debug commands, once gui.debugging is on: a file as the index has it.
    await writeFile(join(folder, 'notes.txt'), 'hello');
    t.equal((await call(service, 'POST', '/rest/db/scan?folder=docs')).status, 200);
    await cli('config', 'gui', 'debugging', 'set', 'true');
    t.match(JSON.parse(await cli('debug', 'file', 'docs', 'notes.txt')), {
      global: { name: 'notes.txt', size: 5 },
      local: { name: 'notes.txt' },
    });
    t.match(JSON.parse(await cli('show', 'system')), { myID }, 'the key still lets the client in');
  },
);

t.test('pause and resume persist across a restart and a new start, with their events', async (t) => {
  const home = await tempDir(t);
  const [a, b] = [newDeviceId(), newDeviceId()];
  const first = await startService(t, { home });
  t.equal(
    (
      await call(first, 'PUT', '/rest/config/devices', {
        body: JSON.stringify([{ deviceID: a }, { deviceID: b }]),
      })
    ).status,
    200,
  );
  t.equal((await call(first, 'POST', `/rest/system/pause?device=${a}`)).status, 200);
  const events = (await call(first, 'GET', '/rest/events?since=0&timeout=0')).body as Array<{
    type: string;
    data: unknown;
    id: number;
  }>;
  t.same(
    events.map((event) => event.type),
    ['Starting', 'StartupComplete', 'ConfigSaved', 'ConfigSaved', 'DevicePaused'],
  );
  t.same(events.at(-1)?.data, { device: a });

  const before = await first.workerPid();
  await call(first, 'POST', '/rest/system/restart');
  await first.waitForLog((line) => line.msg === 'worker ready' && line.workerPid !== before);
  const paused = async (service: typeof first) =>
    Object.fromEntries(
      (
        (await call(service, 'GET', '/rest/config/devices')).body as Array<{
          deviceID: string;
          paused: boolean;
        }>
      ).map((device) => [device.deviceID, device.paused]),
    );
  t.match(await paused(first), { [a]: true, [b]: false }, 'after a restart');
  const fresh = (await call(first, 'GET', '/rest/events?since=0&timeout=0')).body as Array<{
    id: number;
    type: string;
  }>;
  t.same(
    fresh.map((event) => [event.id, event.type]),
    [
      [2 ** 32 + 1, 'Starting'],
      [2 ** 32 + 2, 'StartupComplete'],
    ],
    "a new worker numbers its events past the last worker's: a client's since stays meaningful",
  );

  await call(first, 'POST', '/rest/system/resume');
  await call(first, 'POST', '/rest/system/pause');
  await call(first, 'POST', '/rest/system/shutdown');
  t.equal((await first.exited).exitCode, 0);
  const second = await startService(t, { home });
  t.match(await paused(second), { [a]: true, [b]: true }, 'after a new start');
  t.match(
    (await call(second, 'GET', '/rest/events?since=0&timeout=0')).body,
    [{ id: 1, type: 'Starting' }],
    'a new start numbers from 1, as Syncthing does',
  );
  const connections = (await call(second, 'GET', '/rest/system/connections')).body;
  t.match(connections.connections[b], { paused: true, connected: false });
});

t.test('a saved GUI address is listened on at once; a port that cannot be bound is refused', async (t) => {
  const home = await tempDir(t);
  const apiKey = 'a-key-for-the-gui-address-test';
  await writeFile(
    join(home, 'config.json'),
    JSON.stringify({ version: 2, config: { gui: { address: '127.0.0.1:0', apiKey } } }),
    { mode: 0o600 },
  );
  // No --address: the configuration decides.
  const service = await startService(t, { home, env: { SYNCD_ADDRESS: '', SYNCD_API_KEY: '' } });
  const worker = await service.workerPid();
  t.equal((await call(service, 'GET', '/rest/system/status')).body.guiAddressOverridden, false);

  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  t.teardown(() => busy.close());
  const taken = `127.0.0.1:${(busy.address() as { port: number }).port}`;
  const refused = await call(service, 'PATCH', '/rest/config/gui', {
    body: JSON.stringify({ address: taken }),
  });
  t.equal(refused.status, 400);
  t.match(refused.body.message, /gui\.address: cannot listen on .*in use/);
  t.equal(
    JSON.parse(await readFile(join(home, 'config.json'), 'utf8')).config.gui.address,
    '127.0.0.1:0',
    'nothing written',
  );

  const next = `127.0.0.1:${await getPort({ host: '127.0.0.1' })}`;
  const moved = await call(service, 'PATCH', '/rest/config/gui', { body: JSON.stringify({ address: next }) });
  t.equal(moved.status, 200);
  const there = { url: `http://${next}`, apiKey };
  const status = (await call(there, 'GET', '/rest/system/status')).body;
  t.same([status.pid, status.guiAddressUsed], [worker, next], 'served there by the same worker');
  t.equal(await tryConnect(service.address), 'ECONNREFUSED', 'the old address is let go');
  t.equal((await readFile(join(home, 'address'), 'utf8')).trim(), next, 'the address file says so');

  // A new key is the one checked from then on.
  const newKey = 'a-new-key-for-the-gui-0123';
  t.equal(
    (await call(there, 'PATCH', '/rest/config/gui', { body: JSON.stringify({ apiKey: newKey }) })).status,
    200,
  );
  t.equal((await call(there, 'GET', '/rest/system/ping')).status, 401, 'the old key no longer works');
  t.equal((await call({ url: there.url, apiKey: newKey }, 'GET', '/rest/system/ping')).status, 200);
  await call({ url: there.url, apiKey: newKey }, 'POST', '/rest/system/shutdown');
  t.equal((await service.exited).exitCode, 0);
});

t.test('a flag wins over the configuration, and the status says so', async (t) => {
  const service = await startService(t);
  const status = (await call(service, 'GET', '/rest/system/status')).body;
  t.equal(status.guiAddressOverridden, true);
  const next = `127.0.0.1:${await getPort({ host: '127.0.0.1' })}`;
  t.equal(
    (await call(service, 'PATCH', '/rest/config/gui', { body: JSON.stringify({ address: next }) })).status,
    200,
  );
  t.equal((await call(service, 'GET', '/rest/config/gui')).body.address, next, 'saved');
  t.equal((await call(service, 'GET', '/rest/system/ping')).status, 200, 'still served where the flag says');
  t.equal(await tryConnect(next), 'ECONNREFUSED', 'not moved');
});
