import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import {
  CONFIG_VERSION,
  configFileText,
  loadConfigFile,
  readStoredApiKey,
} from '../../../shared/config/config-file.ts';
import { newApiKey } from '../../../shared/home.ts';
import { passwordMatches } from '../../../shared/gui-password.ts';
import { ConfigStore } from '../../../supervisor/config-store.ts';
import { testDeviceId } from '../../helpers/config.ts';

const key = 'a-key-of-an-older-version';
const identity = { myId: testDeviceId, deviceName: 'here', newApiKey };

t.test('a file of version 0 or 1 is migrated: its key moves to gui.apiKey', async (t) => {
  for (const old of [{ apiKey: key }, { version: 1, apiKey: key }]) {
    const path = join(t.testdir(), 'config.json');
    await writeFile(path, JSON.stringify({ ...old, note: 'mine' }));
    const loaded = await loadConfigFile(path, identity);
    t.equal(loaded.config.gui.apiKey, key);
    t.equal(loaded.changed, true, 'to be saved');
    t.equal(loaded.keyGenerated, false);
    t.same(loaded.dropped, ['note'], 'what has no place is named');
    t.equal(await readStoredApiKey(path), key, 'clients read the key of an old file too');
    const store = new ConfigStore(path, loaded.config);
    await store.write();
    t.equal((await stat(path)).mode & 0o777, 0o600);
    const written = JSON.parse(await readFile(path, 'utf8'));
    t.equal(written.version, CONFIG_VERSION);
    t.equal(written.config.gui.apiKey, key);
    t.same(
      written.config.devices.map((d: { deviceID: string }) => d.deviceID),
      [testDeviceId],
    );
    const again = await loadConfigFile(path, identity);
    t.equal(again.changed, false, 'read as current from then on');
    t.same(again.config, loaded.config);
  }
});

t.test('a new home gets a configuration with a generated key and this device', async (t) => {
  const path = join(t.testdir(), 'config.json');
  const loaded = await loadConfigFile(path, identity);
  t.equal(loaded.keyGenerated, true);
  t.ok(loaded.config.gui.apiKey.length >= 32);
  t.equal(loaded.config.devices[0]?.name, 'here');
  t.same(loaded.config.folders, []);
  t.equal(loaded.config.options.globalAnnounceEnabled, false, 'discovery is opt-in');
  t.equal(loaded.config.options.localAnnounceEnabled, false);
  t.equal(await readStoredApiKey(path), undefined, 'nothing written by loading');
});

t.test('a file that cannot be used is refused, naming the field, and left as it is', async (t) => {
  const path = join(t.testdir(), 'config.json');
  const valid = (config: object) => JSON.stringify({ version: CONFIG_VERSION, config });
  for (const [text, message] of [
    [
      JSON.stringify({ version: CONFIG_VERSION + 1 }),
      /written by a newer syncd \(version 3; this one reads up to 2\)/,
    ],
    [JSON.stringify({ version: 'one', apiKey: key }), /"version" must be a whole number/],
    ['{"apiKey": ', /is not valid JSON/],
    ['[]', /must hold a JSON object/],
    ['{"apiKey": 12}', /"apiKey" must be a string/],
    ['{"apiKey": "short"}', /config\.gui\.apiKey: must have at least 16 characters/],
    [
      valid({ gui: { apiKey: key }, folders: [{ id: 'a', path: 'relative' }] }),
      /config\.folders\[0\]\.path: "relative" is relative/,
    ],
    [
      valid({ gui: { apiKey: key }, options: { maxSendKbps: 'fast' } }),
      /config\.options\.maxSendKbps: must be a number, not "fast"/,
    ],
    [
      valid({ gui: { apiKey: key }, options: { natEnabled: true } }),
      /config\.options\.natEnabled: syncd does not act on this field \(syncd does no NAT traversal/,
    ],
    [
      valid({ gui: { apiKey: key }, devices: [{ deviceID: 'ABC' }] }),
      /config\.devices\[0\]\.deviceID: "ABC" is not a device ID/,
    ],
    [
      JSON.stringify({ version: CONFIG_VERSION, config: {}, apiKey: key }),
      /"apiKey" is not a field of the file/,
    ],
  ] as const) {
    await writeFile(path, text);
    await t.rejects(loadConfigFile(path, identity), { name: 'SettingError', message }, text);
    t.equal(await readFile(path, 'utf8'), text, 'untouched');
  }
});

t.test('the file holds the configuration under a version of its own', async (t) => {
  const path = join(t.testdir(), 'config.json');
  const { config } = await loadConfigFile(path, identity);
  t.same(JSON.parse(configFileText(config)), { version: CONFIG_VERSION, config });
});

t.test('a GUI password written in plain text is hashed, to be saved; a hash is kept', async (t) => {
  const path = join(t.testdir(), 'config.json');
  const gui = { apiKey: 'a-key-of-sixteen-or-more', user: 'admin', password: 'by hand' };
  await writeFile(path, JSON.stringify({ version: CONFIG_VERSION, config: { gui } }));
  const loaded = await loadConfigFile(path, identity);
  t.match(loaded.config.gui.password, /^\$2[aby]\$10\$/);
  t.ok(await passwordMatches('by hand', loaded.config.gui.password));
  t.equal(loaded.changed, true, 'to be saved');
  const hashed = { ...gui, password: loaded.config.gui.password };
  await writeFile(path, JSON.stringify({ version: CONFIG_VERSION, config: { gui: hashed } }));
  const again = await loadConfigFile(path, identity);
  t.equal(again.config.gui.password, hashed.password);
  t.equal(again.changed, false);
});
