// syncthingctl (syncthingtray's command-line client for Syncthing) against syncd, unchanged: status,
// log, rescans, pause and resume, the configuration, a restart. .ci/run installs it.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import t from 'tap';
import { api, startService, withNewWorker } from '../../helpers/service.ts';
import { newDeviceId } from '../../helpers/config.ts';

const hasCtl = (await execa('sh', ['-c', 'command -v syncthingctl'], { reject: false })).exitCode === 0;
const skip = hasCtl
  ? false
  : 'syncthingctl is not installed (.ci/run installs it from Debian’s syncthingtray)';

t.test('syncthingctl drives syncd: status, log, rescan, pause, resume, cat, restart', { skip }, async (t) => {
  const service = await startService(t);
  const dir = t.testdir();
  const peer = newDeviceId();
  await mkdir(join(dir, 'docs'));
  // Qt's runtime folder, private as it wants it.
  await mkdir(join(dir, 'runtime'), { mode: 0o700 });
  await api(service, 'PUT', `/rest/config/devices/${peer}`, { deviceID: peer, name: 'laptop' });
  await api(service, 'PUT', '/rest/config/folders/docs', { id: 'docs', path: join(dir, 'docs') });
  const ctl = async (...args: string[]) => {
    const result = await execa(
      'syncthingctl',
      [...args, '--no-color', '--url', service.url, '--api-key', service.apiKey],
      {
        env: { XDG_RUNTIME_DIR: join(dir, 'runtime'), HOME: dir },
        input: '',
        reject: false,
        timeout: 60_000,
      },
    );
    t.equal(
      result.exitCode,
      0,
      `syncthingctl ${args.join(' ')}${result.exitCode === 0 ? '' : `: ${result.stderr}`}`,
    );
    t.notMatch(result.stdout + result.stderr, /Unable to|error/i, `syncthingctl ${args.join(' ')}: no error`);
    return result.stdout;
  };

  t.match(await ctl('status'), /docs[\s\S]*laptop/, 'status lists the folder and the device');
  t.match(await ctl('log'), /My ID: [A-Z2-7-]{63}/, 'log shows the worker’s lines');
  await ctl('rescan-all');
  await ctl('pause', '--all-devs');
  const paused = await api<{ devices: Array<{ deviceID: string; paused: boolean }> }>(
    service,
    'GET',
    '/rest/config',
  );
  t.equal(paused.devices.find((device) => device.deviceID === peer)?.paused, true, 'paused, and saved');
  await ctl('resume', '--all-devs');
  const resumed = await api<{ devices: Array<{ deviceID: string; paused: boolean }> }>(
    service,
    'GET',
    '/rest/config',
  );
  t.equal(resumed.devices.find((device) => device.deviceID === peer)?.paused, false);
  t.match(JSON.parse(await ctl('cat')), { folders: [{ id: 'docs' }] }, 'cat prints the configuration');
  await withNewWorker(service, () => ctl('restart'));
});
