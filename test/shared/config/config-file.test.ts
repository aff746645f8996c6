import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { CONFIG_VERSION, loadConfig } from '../../../shared/config/config-file.ts';
import { resolveApiKey } from '../../../shared/home.ts';

const key = 'a-key-of-an-older-version';

t.test('a config of an older version is migrated, keeping what it holds, and saved', async (t) => {
  const home = t.testdir();
  const path = join(home, 'config.json');
  await writeFile(path, JSON.stringify({ apiKey: key, note: 'mine' }));
  t.same(await loadConfig(path), {
    config: { apiKey: key, note: 'mine', version: CONFIG_VERSION },
    migrated: true,
  });
  t.same(await resolveApiKey(home, undefined), { apiKey: key, source: 'config' });
  t.same(
    JSON.parse(await readFile(path, 'utf8')),
    { apiKey: key, note: 'mine', version: 1 },
    'saved migrated',
  );
  t.same((await loadConfig(path))?.migrated, false, 'and read as current from then on');
});

t.test('a new home gets a config with the current version', async (t) => {
  const home = t.testdir();
  const { apiKey } = await resolveApiKey(home, undefined);
  t.same(JSON.parse(await readFile(join(home, 'config.json'), 'utf8')), { version: CONFIG_VERSION, apiKey });
});

t.test('a config from a newer syncd or with a bad version is refused and left as it is', async (t) => {
  const home = t.testdir();
  const path = join(home, 'config.json');
  for (const [text, message] of [
    [
      JSON.stringify({ version: CONFIG_VERSION + 1, apiKey: key }),
      /written by a newer syncd \(version 2; this one reads up to 1\)/,
    ],
    [JSON.stringify({ version: 'one', apiKey: key }), /"version" must be a whole number/],
  ] as const) {
    await writeFile(path, text);
    await t.rejects(resolveApiKey(home, undefined), { name: 'SettingError', message });
    t.equal(await readFile(path, 'utf8'), text, 'untouched');
  }
});
