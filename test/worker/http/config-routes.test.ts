// Syncthing's configuration endpoints, in-process: the supervisor's side is played by localConfig.
import t, { type Test } from 'tap';
import { buildApp } from '../../../worker/http/app.ts';
import { EventLog, type SyncdEvent } from '../../../worker/events/event-log.ts';
import { appOptions, injector, testApiKey } from '../../helpers/app.ts';
import { localConfig, newDeviceId, testConfiguration, testDeviceId } from '../../helpers/config.ts';

async function setup(t: Test, config = testConfiguration()) {
  const local = localConfig(config);
  const events = new EventLog();
  const { configEvents } = await import('../../../worker/config/config-events.ts');
  local.config.onChange(configEvents(events));
  const app = buildApp(appOptions({ config: local.config, events, deviceId: testDeviceId }));
  await app.ready();
  t.teardown(() => app.close());
  const call = injector(app);
  const allEvents = async () =>
    (await events.subscription(EventLog.defaultTypes).since(0, 0)).map((e: SyncdEvent) => [e.type, e.data]);
  return { ...local, call, events, allEvents };
}

t.test('GET /rest/config is the whole configuration in Syncthing shape, this device included', async (t) => {
  const { call } = await setup(t);
  for (const path of ['/rest/config', '/rest/system/config']) {
    const config = (await call('GET', path)).json();
    t.same(Object.keys(config), [
      'version',
      'folders',
      'devices',
      'gui',
      'ldap',
      'options',
      'remoteIgnoredDevices',
      'defaults',
    ]);
    t.equal(config.version, 36);
    t.same(
      config.devices.map((d: { deviceID: string }) => d.deviceID),
      [testDeviceId],
    );
  }
  t.same((await call('GET', '/rest/config/insync')).json(), { configInSync: true });
  t.same((await call('GET', '/rest/system/config/insync')).json(), { configInSync: true });
  t.same((await call('GET', '/rest/config/restart-required')).json(), { requiresRestart: false });
});

t.test('a device added starts from defaults.device; answers are 200 with no body', async (t) => {
  const { call, saved } = await setup(t);
  const id = newDeviceId();
  t.equal((await call('PATCH', '/rest/config/defaults/device', { compression: 'always' })).status, 200);
  const added = await call('POST', '/rest/config/devices', { deviceID: id.toLowerCase(), name: 'laptop' });
  t.same([added.status, added.text], [200, '']);
  const device = (await call('GET', `/rest/config/devices/${id}`)).json();
  t.match(device, { deviceID: id, name: 'laptop', compression: 'always', addresses: ['dynamic'] });
  t.equal(saved.length, 2);
  t.same(
    (await call('GET', '/rest/config/devices'))
      .json()
      .map((d: { deviceID: string }) => d.deviceID)
      .sort(),
    [id, testDeviceId].sort(),
  );
});

t.test('PATCH merges into a device, PUT replaces it from the defaults, DELETE removes it', async (t) => {
  const { call, config } = await setup(t);
  const id = newDeviceId();
  await call('PUT', `/rest/config/devices/${id}`, { name: 'a', addresses: ['tcp://192.0.2.1:22000'] });
  await call('PATCH', `/rest/config/devices/${id}`, { name: 'b' });
  t.match((await call('GET', `/rest/config/devices/${id}`)).json(), {
    name: 'b',
    addresses: ['tcp://192.0.2.1:22000'],
  });
  await call('PUT', `/rest/config/devices/${id}`, { name: 'c' });
  t.match((await call('GET', `/rest/config/devices/${id}`)).json(), { name: 'c', addresses: ['dynamic'] });

  await call('POST', '/rest/config/folders', { id: 'f', path: '/tmp/f', devices: [{ deviceID: id }] });
  t.equal((await call('DELETE', `/rest/config/devices/${id}`)).status, 200);
  t.equal((await call('GET', `/rest/config/devices/${id}`)).status, 404);
  t.same(
    config.current.folders[0]?.devices.map((d) => d.deviceID),
    [testDeviceId],
    'its folders are no longer shared with it',
  );
});

t.test('a folder is added the way Syncthing CLI sends it: null lists and zero values', async (t) => {
  const { call } = await setup(t);
  const folder = {
    id: 'docs',
    label: '',
    path: '/srv/docs',
    type: 'sendreceive',
    devices: null,
    minDiskFree: { value: 0, unit: '' },
    versioning: { type: '', params: null, cleanupIntervalS: 3600, fsPath: '', fsType: 'basic' },
    weakHashThresholdPct: 0,
    markerName: '',
    fsWatcherDelayS: 0,
  };
  t.equal((await call('POST', '/rest/config/folders', folder)).status, 200);
  const stored = (await call('GET', '/rest/config/folders/docs')).json();
  t.match(stored, {
    devices: [{ deviceID: testDeviceId, introducedBy: '', encryptionPassword: '' }],
    markerName: '.stfolder',
    weakHashThresholdPct: 25,
    versioning: { params: {} },
    fsWatcherEnabled: false,
    fsWatcherDelayS: 10,
  });
  t.equal((await call('PATCH', '/rest/config/folders/docs', { paused: true })).status, 200);
  t.equal((await call('GET', '/rest/config/folders/docs')).json().paused, true);
});

t.test('bad input is a 400 naming the problem, and nothing is saved', async (t) => {
  const { call, saved, config } = await setup(t);
  const before = config.current;
  const other = newDeviceId();
  const cases: Array<[string, string, unknown, RegExp]> = [
    [
      'POST',
      '/rest/config/devices',
      { deviceID: 'ABCDEFG' },
      /deviceID: "ABCDEFG" is not a device ID: a device ID has 56 characters/,
    ],
    [
      'POST',
      '/rest/config/devices',
      { deviceID: other.replace(/^./, other[0] === 'A' ? 'B' : 'A') },
      /check character/,
    ],
    [
      'POST',
      '/rest/config/devices',
      { deviceID: `${other.slice(0, -1)}!` },
      /"!" is not a character of device IDs/,
    ],
    ['POST', '/rest/config/folders', { path: '/tmp/x' }, /folders\[0\]\.id: is missing/],
    [
      'POST',
      '/rest/config/folders',
      { id: 'x' },
      /folders\[0\]\.path: is missing: every folder needs a path/,
    ],
    [
      'POST',
      '/rest/config/folders',
      { id: 'x', path: 'relative/path' },
      /folders\[0\]\.path: "relative\/path" is relative/,
    ],
    [
      'PUT',
      '/rest/config/folders',
      [
        { id: 'x', path: '/a' },
        { id: 'x', path: '/b' },
      ],
      /\[1\]\.id: "x" is listed twice in the request/,
    ],
    [
      'POST',
      '/rest/config/folders',
      { id: 'x', path: '/a', devices: [{ deviceID: other }] },
      /is not a configured device: add it to the devices first/,
    ],
    [
      'PATCH',
      '/rest/config/options',
      { maxSendKbps: 'fast' },
      /options\.maxSendKbps: must be a number, not "fast"/,
    ],
    [
      'PUT',
      '/rest/config/devices',
      [{ deviceID: other, allowedNetworks: ['192.168.1.0/24', 'the office'] }],
      /devices\[\d\]\.allowedNetworks\[1\]: "the office" is not a network/,
    ],
    [
      'PATCH',
      '/rest/config/options',
      { alwaysLocalNets: ['10.0.0.0/33'] },
      /options\.alwaysLocalNets\[0\]: "10\.0\.0\.0\/33" is not a network/,
    ],
    [
      'PATCH',
      '/rest/config/options',
      { listenAddresses: 'tcp://x:1' },
      /options\.listenAddresses: must be a list/,
    ],
    ['PATCH', '/rest/config/gui', { apiKey: 'short' }, /gui\.apiKey: must have at least 16 characters/],
    ['PATCH', '/rest/config/gui', { address: 'nowhere' }, /gui\.address: "nowhere" is not HOST:PORT/],
    [
      'PATCH',
      '/rest/config/gui',
      { authMode: 'ldap' },
      /gui\.authMode: "static": gui.user and gui.password; syncd has no LDAP/,
    ],
    [
      'POST',
      '/rest/config/folders',
      { id: 'x', path: '/a', type: 'receiveencrypted' },
      /not supported by syncd/,
    ],
    ['PUT', '/rest/config', { folders: {} }, /^folders: must be a list/],
    [
      'PUT',
      '/rest/config',
      { gui: { apiKey: testApiKey }, extra: 1, options: { reconnectionIntervalS: 'soon' } },
      /^options\.reconnectionIntervalS: must be a number/,
    ],
    ['PUT', `/rest/config/devices/${other}`, { deviceID: newDeviceId() }, /differs from the ID in the path/],
    ['POST', '/rest/config/devices', '{"deviceID": ', /the body is not JSON/],
    ['POST', '/rest/config/devices', [], /the body must be a JSON object/],
    ['PUT', '/rest/config/devices', {}, /the body must be a JSON list/],
    ['DELETE', `/rest/config/devices/${testDeviceId}`, undefined, /this device itself/],
  ];
  for (const [method, path, body, message] of cases) {
    const response = await call(method, path, body);
    t.equal(response.status, 400, `${method} ${path} ${JSON.stringify(body)}`);
    t.match(response.json(), { statusCode: 400, message });
  }
  t.equal(saved.length, 0, 'nothing saved');
  t.equal(config.current, before, 'nothing changed');
});

t.test("fields Syncthing does not have are skipped, as Syncthing skips them: the GUI's saves", async (t) => {
  const { call, config, saved } = await setup(t);
  const id = newDeviceId();
  t.equal((await call('POST', '/rest/config/devices', { deviceID: id })).status, 200);
  // Syncthing's GUI saves its working copy: what GET gave it, with working fields of its own.
  const copy = (await call('GET', '/rest/config')).json();
  copy.$$hashKey = 'object:3';
  copy.devices[1].$$hashKey = 'object:7';
  copy.devices[1]._editing = true;
  copy.devices[1].name = 'laptop';
  Object.assign(copy.options, { _listenAddressesStr: 'default', deviceName: 'x', upgrades: 'none' });
  copy.options.reconnectionIntervalS = 7;
  copy.gui._editing = { user: '' };
  const put = await call('PUT', '/rest/config', copy);
  t.same([put.status, put.text], [200, ''], 'saved');
  const after = (await call('GET', '/rest/config')).json();
  t.equal(after.devices[1].name, 'laptop', 'the change it made is made');
  t.equal(after.options.reconnectionIntervalS, 7);
  t.notOk('$$hashKey' in after || '_editing' in after.devices[1] || '_listenAddressesStr' in after.options);
  t.same(Object.keys(after.options), Object.keys(config.current.options), 'no field added');

  const patch = await call('PATCH', '/rest/config/options', { noSuchOption: 1, reconnectionIntervalS: 9 });
  t.equal(patch.status, 200);
  t.equal(config.current.options.reconnectionIntervalS, 9);
  t.notOk('noSuchOption' in config.current.options);
  const device = await call('PATCH', `/rest/config/devices/${id}`, { $$hashKey: 'o:1', name: 'phone' });
  t.equal(device.status, 200);
  t.equal(config.current.devices.find((d) => d.deviceID === id)?.name, 'phone');
  t.equal(saved.length, 4, 'four saves');
  // A field it has is still checked, with the unknown ones beside it.
  const bad = await call('PATCH', '/rest/config/options', { $$hashKey: 'o:2', reconnectionIntervalS: 'x' });
  t.equal(bad.status, 400);
  t.equal(saved.length, 4, 'nothing saved');
});

t.test('unknown IDs are 404, malformed device IDs 400', async (t) => {
  const { call } = await setup(t);
  const unknown = newDeviceId();
  for (const method of ['GET', 'PATCH', 'DELETE']) {
    const response = await call(
      method,
      `/rest/config/devices/${unknown}`,
      method === 'PATCH' ? {} : undefined,
    );
    t.equal(response.status, 404, `${method} device`);
    t.match(response.json().message, `no device with ID ${unknown}`);
    t.equal(
      (await call(method, '/rest/config/folders/nope', method === 'PATCH' ? {} : undefined)).status,
      404,
    );
  }
  t.match((await call('GET', '/rest/config/devices/XYZ')).json(), {
    statusCode: 400,
    code: 'SYNCD_ERR_INVALID_DEVICE_ID',
    message: /"XYZ" is not a device ID/,
  });
});

t.test(
  'a whole configuration PUT (or POSTed to /rest/system/config) is prepared as Syncthing does',
  async (t) => {
    const { call, config } = await setup(t);
    const a = newDeviceId();
    const whole = (await call('GET', '/rest/config')).json();
    whole.devices.push({ deviceID: a, name: 'a', allowedNetworks: null, ignoredFolders: null });
    whole.folders.push({ id: 'z', path: '/z', devices: [{ deviceID: a }] }, { id: 'b', path: '/b' });
    t.equal((await call('POST', '/rest/system/config', whole)).status, 200);
    t.same(
      config.current.folders.map((f) => f.id),
      ['b', 'z'],
      'folders sorted by ID',
    );
    t.same(config.current.folders[1]?.devices.map((d) => d.deviceID).sort(), [a, testDeviceId].sort());
    t.match(
      config.current.devices.find((d) => d.deviceID === a),
      { allowedNetworks: [], ignoredFolders: [] },
    );
    // Without this device, it comes back.
    whole.devices = [];
    whole.folders = [];
    t.equal((await call('PUT', '/rest/config', whole)).status, 200);
    t.same(
      config.current.devices.map((d) => d.deviceID),
      [testDeviceId],
    );
  },
);

t.test('sections: PUT starts from Syncthing defaults, PATCH from what is there', async (t) => {
  const { call, config } = await setup(t);
  await call('PATCH', '/rest/config/options', { progressUpdateIntervalS: 10, reconnectionIntervalS: 5 });
  await call('PUT', '/rest/config/options', { progressUpdateIntervalS: 20 });
  t.match(config.current.options, { progressUpdateIntervalS: 20, reconnectionIntervalS: 60 });
  await call('PUT', '/rest/config/defaults/ignores', { lines: ['*.tmp'] });
  t.same((await call('GET', '/rest/config/defaults/ignores')).json(), { lines: ['*.tmp'] });
  const ldap = await call('PATCH', '/rest/config/ldap', { address: 'ldap.example:389' });
  t.match(
    [ldap.status, ldap.json()],
    [400, { message: /^ldap\.address: syncd does not act on this field \(syncd has no LDAP login/ }],
    'a field syncd does not act on is refused, naming it',
  );
  t.equal((await call('GET', '/rest/config/ldap')).json().address, '', 'and nothing changed');
  await call('PATCH', '/rest/config/defaults/folder', { rescanIntervalS: 60 });
  await call('POST', '/rest/config/folders', { id: 'x', path: '/x' });
  t.equal(config.current.folders[0]?.rescanIntervalS, 60, 'new folders start from defaults.folder');
});

t.test(
  'pause and resume: all devices but this one, or one; persisted in the configuration, with events',
  async (t) => {
    const { call, config, allEvents } = await setup(t);
    const [a, b] = [newDeviceId(), newDeviceId()];
    await call('PUT', '/rest/config/devices', [{ deviceID: a }, { deviceID: b }]);
    t.same((await call('POST', '/rest/system/pause')).status, 200);
    const paused = () => Object.fromEntries(config.current.devices.map((d) => [d.deviceID, d.paused]));
    t.same(paused(), { [a]: true, [b]: true, [testDeviceId]: false });
    t.equal((await call('POST', `/rest/system/resume?device=${a.toLowerCase()}`)).status, 200);
    t.same(paused(), { [a]: false, [b]: true, [testDeviceId]: false });
    const connections = (await call('GET', '/rest/system/connections')).json();
    t.match(connections.connections[b], { paused: true, connected: false, address: '', inBytesTotal: 0 });
    t.match(connections.connections[a], { paused: false });
    t.ok(connections.connections[testDeviceId], 'this device is listed too');
    t.match(connections.total, { inBytesTotal: 0, outBytesTotal: 0 });

    const bad = await call('POST', '/rest/system/pause?device=bogus');
    t.match(
      [bad.status, bad.json().message],
      [400, /"bogus" is not a device ID: a device ID has 56 characters/],
    );
    const unknown = newDeviceId();
    t.equal((await call('POST', `/rest/system/pause?device=${unknown}`)).status, 404);
    t.equal((await call('GET', '/rest/system/pause')).status, 405);

    const types = (await allEvents()).map(([type]) => type);
    t.same(
      types.filter((type) => type !== 'ConfigSaved'),
      ['DevicePaused', 'DevicePaused', 'DeviceResumed'],
    );
    t.match(
      (await allEvents()).find(([type]) => type === 'DeviceResumed'),
      ['DeviceResumed', { device: a }],
    );
    t.equal(types.filter((type) => type === 'ConfigSaved').length, 3, 'ConfigSaved for each save');
  },
);

t.test('folders pause and resume through PATCH, with FolderPaused and FolderResumed', async (t) => {
  const { call, allEvents } = await setup(t);
  await call('POST', '/rest/config/folders', { id: 'f', label: 'F', path: '/f' });
  await call('PATCH', '/rest/config/folders/f', { paused: true });
  await call('PATCH', '/rest/config/folders/f', { paused: false });
  const folderEvents = (await allEvents()).filter(([type]) => String(type).startsWith('Folder'));
  t.same(folderEvents, [
    ['FolderPaused', { id: 'f', label: 'F' }],
    ['FolderResumed', { id: 'f', label: 'F' }],
  ]);
});

t.test('a save the supervisor refuses is answered with its status, and nothing changes', async (t) => {
  const { call, control, config } = await setup(t);
  const before = config.current;
  control.refuse = { ok: false, status: 400, message: 'gui.address: cannot listen on 1.2.3.4:1: no' };
  const refused = await call('PATCH', '/rest/config/gui', { address: '1.2.3.4:1' });
  t.match(
    [refused.status, refused.json()],
    [400, { code: 'SYNCD_ERR_INVALID_CONFIG', message: /cannot listen/ }],
  );
  control.refuse = { ok: false, status: 500, message: 'config.json: cannot be written: EROFS' };
  const failed = await call('PATCH', '/rest/config/options', { progressUpdateIntervalS: 1 });
  t.match([failed.status, failed.json()], [500, { code: 'SYNCD_ERR_CONFIG_NOT_SAVED', message: /EROFS/ }]);
  control.refuse = { ok: false, status: 409, message: 'changed meanwhile' };
  t.equal((await call('POST', '/rest/system/pause')).status, 200, 'nothing to pause: nothing to save');
  t.equal((await call('PATCH', '/rest/config/options', { progressUpdateIntervalS: 1 })).status, 409);
  t.equal(config.current, before);
});

t.test('GET /rest/system/version answers in Syncthing shape', async (t) => {
  const { call } = await setup(t);
  const version = (await call('GET', '/rest/system/version')).json();
  t.same(Object.keys(version).sort(), [
    'arch',
    'codename',
    'date',
    'isBeta',
    'isCandidate',
    'isRelease',
    'longVersion',
    'os',
    'stamp',
    'tags',
    'user',
    'version',
  ]);
  t.match(version, { version: /^v\d+\.\d+\.\d+/, os: process.platform, longVersion: /^syncd v/ });
});
