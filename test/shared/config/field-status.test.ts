import { readFile } from 'node:fs/promises';
import t from 'tap';
import { decodeConfiguration } from '../../../shared/config/decode.ts';
import { type Configuration, emptyConfiguration } from '../../../shared/config/defaults.ts';
import { type FieldStatus, SECTIONS } from '../../../shared/config/field-status.ts';
import { PAGE, pageWithTables } from '../../../scripts/docs/config-fields.ts';
import { newDeviceId, testConfiguration, testDeviceId } from '../../helpers/config.ts';

// A value of the same type as `value` that differs from it.
function another(value: unknown): unknown {
  if (typeof value === 'boolean') return !value;
  if (typeof value === 'number') return value + 7;
  if (typeof value === 'string') return `${value}x`;
  if (Array.isArray(value)) return [...value, 'tcp://192.0.2.9:22000'];
  if (typeof value === 'object' && value !== null) {
    const [key, inner] = Object.entries(value)[0] as [string, unknown];
    return { ...value, [key]: another(inner) };
  }
  throw new Error(`no other value for ${String(value)}`);
}

// Where a field of each section lives in a configuration with one folder shared with one device.
type Fields = Record<string, unknown>;
const places: Record<string, (config: Configuration) => Fields> = {
  'folders[]': (config) => config.folders[0] as Fields,
  'folders[].devices[]': (config) => config.folders[0]!.devices[0] as Fields,
  'devices[]': (config) => config.devices[0] as Fields,
  gui: (config) => config.gui as Fields,
  ldap: (config) => config.ldap as Fields,
  options: (config) => config.options as Fields,
};
// The path an error names for a section: list indexes as \d+ (lists are sorted before the check).
const pathOf = (name: string) => name.replace(/\[\]/g, '\\[\\d+\\]');

const peer = newDeviceId();
function withOneFolder() {
  const config = structuredClone(testConfiguration());
  config.devices = [{ ...emptyConfiguration().defaults.device, deviceID: peer }];
  config.folders = [
    {
      ...emptyConfiguration().defaults.folder,
      id: 'f',
      path: '/tmp/f',
      devices: [{ deviceID: peer, introducedBy: '', encryptionPassword: '' }],
    },
  ];
  return config;
}

t.test('every field of Syncthing has a status, and the docs list each as the code has it', async (t) => {
  for (const { name, fields, defaults } of SECTIONS) {
    t.same(Object.keys(fields).sort(), Object.keys(defaults).sort(), `${name}: every field, no other`);
  }
  const page = await readFile(PAGE, 'utf8');
  t.equal(
    page,
    await pageWithTables(page),
    'docs/configuration.md is current (scripts/docs/config-fields.ts)',
  );
});

t.test(
  'a fixed or refused field is refused away from its default, naming it; the rest accepted',
  async (t) => {
    const base = decodeConfiguration(withOneFolder(), testDeviceId, 'here');
    t.ok(base, 'the defaults are accepted');
    for (const { name, fields } of SECTIONS) {
      for (const [field, status] of Object.entries(fields) as Array<[string, FieldStatus]>) {
        if (status.status !== 'fixed' && status.status !== 'refused') continue;
        const config = withOneFolder();
        const place = places[name]!(config);
        place[field] = another(place[field]);
        t.throws(
          () => decodeConfiguration(config, testDeviceId, 'here'),
          { name: 'ConfigProblem', message: new RegExp(`^${pathOf(name)}\\.${field}[.:]`) },
          `${name}.${field} is refused`,
        );
      }
    }
  },
);
