// Introducers and auto-accepted folders against real Syncthing 1.19: a folder Syncthing offers to syncd
// (whose entry for it has autoAcceptFolders) is added under defaults.folder.path and syncs; the other
// Syncthing it shares the folder with is introduced to syncd (introducer), and removed again when it
// stops sharing the folder with it. Two Syncthings serve both tests.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { Configuration } from '../../../shared/config/defaults.ts';
import { api, startDevice } from '../../helpers/service.ts';
import { hasSyncthing, NO_SYNCTHING, pollUntil, startSyncthing } from '../../helpers/syncthing.ts';

const skip = hasSyncthing ? false : NO_SYNCTHING;

t.test('Syncthing 1.19 as an auto-accepted peer and an introducer', { skip }, async (t) => {
  const dir = t.testdir({ theirs: { 'hello.txt': 'from the introducer\n' }, accepted: {} });
  const [theirs, accepted] = [join(dir, 'theirs'), join(dir, 'accepted')];
  const [device, introducer, second] = await Promise.all([
    startDevice(t),
    startSyncthing(t, 'introducer'),
    startSyncthing(t, 'second'),
  ]);
  const config = () => api<Configuration>(device.syncd, 'GET', '/rest/config');

  await device.call('PATCH', '/rest/config/defaults/folder', { path: accepted });
  await introducer.call('POST', '/rest/config/devices', { deviceID: device.id, addresses: [device.listen] });
  await introducer.call('POST', '/rest/config/folders', {
    id: 'alpha-id',
    label: 'Alpha: ../shared',
    path: theirs,
    devices: [{ deviceID: device.id }],
  });
  await device.call('POST', '/rest/config/devices', {
    deviceID: introducer.id,
    addresses: [introducer.listen],
    autoAcceptFolders: true,
    introducer: true,
  });

  await t.test('the folder offered is added under the default path, and syncs', async (t) => {
    const path = join(accepted, 'Alpha .. shared');
    const folder = await pollUntil('the folder accepted', async () =>
      (await config()).folders.find((f) => f.id === 'alpha-id'),
    );
    t.match(folder, { label: 'Alpha: ../shared', path, type: 'sendreceive' });
    t.ok(
      folder.devices.some((d) => d.deviceID === introducer.id),
      'shared with the device that offered it',
    );
    const text = await pollUntil('hello.txt synced', () => readFile(join(path, 'hello.txt'), 'utf8'), 60_000);
    t.equal(text, 'from the introducer\n');
  });

  await t.test('a device the introducer shares the folder with is introduced, then removed', async (t) => {
    // The second Syncthing knows syncd (so that it takes its connection); the introducer shares the
    // folder with it too, and tells syncd so.
    await second.call('POST', '/rest/config/devices', { deviceID: device.id, addresses: [device.listen] });
    await introducer.call('POST', '/rest/config/devices', {
      deviceID: second.id,
      name: 'second',
      addresses: [second.listen],
    });
    await introducer.call('PATCH', '/rest/config/folders/alpha-id', {
      devices: [{ deviceID: device.id }, { deviceID: second.id }],
    });
    const introduced = await pollUntil('the second device introduced', async () =>
      (await config()).devices.find((d) => d.deviceID === second.id),
    );
    t.match(introduced, {
      name: 'second',
      addresses: ['dynamic', second.listen],
      introducedBy: introducer.id,
    });
    const share = (await config()).folders
      .find((f) => f.id === 'alpha-id')
      ?.devices.find((d) => d.deviceID === second.id);
    t.match(share, { introducedBy: introducer.id }, 'the folder shared with it, as introduced');
    await pollUntil('syncd connected to the second device at the address introduced', async () => {
      const connections = await api<{ connections: Record<string, { connected: boolean }> }>(
        device.syncd,
        'GET',
        '/rest/system/connections',
      );
      return connections.connections[second.id]?.connected;
    });
    t.pass('connected');

    await introducer.call('PATCH', '/rest/config/folders/alpha-id', { devices: [{ deviceID: device.id }] });
    await pollUntil('the second device removed', async () =>
      (await config()).devices.every((d) => d.deviceID !== second.id),
    );
    const folder = (await config()).folders.find((f) => f.id === 'alpha-id');
    t.notOk(
      folder?.devices.some((d) => d.deviceID === second.id),
      'and its share of the folder',
    );
  });
});
