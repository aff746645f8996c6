import t from 'tap';
import { decodeConfiguration, prepare } from '../../../shared/config/decode.ts';
import { overlay } from '../../../shared/config/shape.ts';
import { DEVICE_DEFAULTS, FOLDER_DEFAULTS } from '../../../shared/config/defaults.ts';
import { newDeviceId, testConfiguration, testDeviceId } from '../../helpers/config.ts';
import { testApiKey } from '../../helpers/app.ts';

t.test(
  'overlay: missing fields keep the base, objects merge, lists are replaced, null empties lists',
  async (t) => {
    const base = { ...FOLDER_DEFAULTS, id: 'a', path: '/a' };
    const merged = overlay(base, {
      label: 'A',
      minDiskFree: { unit: 'MB' },
      devices: null,
      versioning: { params: null },
    });
    t.match(merged, {
      id: 'a',
      label: 'A',
      minDiskFree: { value: 1, unit: 'MB' },
      devices: [],
      versioning: { params: {} },
    });
    t.equal(base.label, '', 'the base is left as it was');
    t.same(overlay(DEVICE_DEFAULTS, { addresses: ['tcp://h:1'] }).addresses, ['tcp://h:1']);
    t.same(overlay(DEVICE_DEFAULTS, { name: null }).name, '', 'null for a string keeps the base, as Go does');
    t.throws(() => overlay(DEVICE_DEFAULTS, { addresses: [1] }, 'devices[0]'), {
      name: 'ConfigProblem',
      message: 'devices[0].addresses[0]: must be a string, not 1',
    });
    t.throws(() => overlay(FOLDER_DEFAULTS, { versioning: { params: { keep: 5 } } }, 'folder'), {
      message: 'folder.versioning.params.keep: must be a string, not 5',
    });
    t.throws(() => overlay(FOLDER_DEFAULTS, { paused: 'yes' }), {
      message: 'paused: must be a boolean, not "yes"',
    });
    t.throws(() => overlay(FOLDER_DEFAULTS, { devices: [{ deviceId: 'x' }] }), {
      message: 'devices[0].deviceId: is not a field of this object',
    });
  },
);

t.test(
  'prepare: this device is always there, and in every folder; IDs canonical; lists sorted',
  async (t) => {
    const other = newDeviceId();
    const config = decodeConfiguration(
      {
        gui: { apiKey: testApiKey },
        devices: [{ deviceID: other.toLowerCase().replace(/-/g, '') }],
        folders: [
          { id: 'b', path: '/b', devices: [{ deviceID: other }] },
          { id: 'a', path: '~/a' },
        ],
        remoteIgnoredDevices: [{ deviceID: other, name: 'x' }],
      },
      testDeviceId,
      'me',
    );
    t.same(config.devices.map((d) => d.deviceID).sort(), [other, testDeviceId].sort());
    t.equal(config.devices.find((d) => d.deviceID === testDeviceId)?.name, 'me');
    t.same(
      config.folders.map((f) => f.id),
      ['a', 'b'],
    );
    t.same(
      config.folders[0]?.devices.map((d) => d.deviceID),
      [testDeviceId],
    );
    t.equal(config.folders[1]?.devices.length, 2);
    t.same(config.remoteIgnoredDevices, [], 'a configured device is no longer ignored');
    t.same(prepare(config, testDeviceId, 'me'), config, 'preparing twice changes nothing');
  },
);

t.test('prepare refuses what Syncthing would quietly drop', async (t) => {
  const other = newDeviceId();
  const base = testConfiguration();
  for (const [input, message] of [
    [
      { devices: [{ deviceID: other }, { deviceID: other.toLowerCase() }] },
      /devices\[1\]\.deviceID: .* is listed twice/,
    ],
    [{ folders: [{ id: 'a', path: '/a', devices: [{ deviceID: other }] }] }, /is not a configured device/],
    [{ devices: [{ deviceID: '' }] }, /devices\[0\]\.deviceID: is missing/],
    [{ devices: [{ deviceID: other, compression: 'lots' }] }, /compression: "lots" is not one of/],
    [{ devices: [{ deviceID: other, addresses: ['192.0.2.1:22000'] }] }, /neither "dynamic" nor an address/],
    [{ gui: { apiKey: testApiKey, enabled: false } }, /gui\.enabled: must be true/],
    [{ options: { localAnnouncePort: 70000 } }, /options\.localAnnouncePort: 70000 is not a port/],
    [{ options: { maxRecvKbps: -1 } }, /options\.maxRecvKbps: must not be negative/],
  ] as const) {
    t.throws(
      () => decodeConfiguration({ ...base, ...input }, testDeviceId, 'me'),
      { name: 'ConfigProblem', message },
      JSON.stringify(input),
    );
  }
});

t.test('introducedBy is a device ID, or empty for none', async (t) => {
  const [introducer, peer] = [newDeviceId(), newDeviceId()];
  const input = (by: string) => ({
    gui: { apiKey: testApiKey },
    devices: [{ deviceID: introducer }, { deviceID: peer, introducedBy: by }],
    folders: [{ id: 'f', path: '/tmp/f', devices: [{ deviceID: peer, introducedBy: by }] }],
  });
  const loose = introducer.replace(/-/g, '').toLowerCase();
  const config = decodeConfiguration(input(loose), testDeviceId, 'here');
  t.equal(config.devices.find((d) => d.deviceID === peer)?.introducedBy, introducer, 'canonical');
  t.equal(config.folders[0]?.devices.find((d) => d.deviceID === peer)?.introducedBy, introducer);
  t.throws(() => decodeConfiguration(input('nobody'), testDeviceId, 'here'), {
    name: 'ConfigProblem',
    message: /^devices\[\d\]\.introducedBy: "nobody" is not a device ID/,
  });
});
