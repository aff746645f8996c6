import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  newApiKey,
  prepareHome,
  readAddressFile,
  readUrlFile,
  removeAddressFiles,
  resolveApiKey,
  writeAddressFiles,
} from '../../shared/home.ts';

async function tempHome(t: { teardown(fn: () => unknown): void }) {
  const dir = await mkdtemp(join(tmpdir(), 'syncd-home-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

t.test('a missing home is created with mode 0700', async (t) => {
  const home = join(await tempHome(t), 'a', 'b');
  await prepareHome(home);
  t.equal((await stat(home)).mode & 0o777, 0o700);
});

t.test('a home that cannot be a folder is refused, naming the setting', async (t) => {
  const file = join(await tempHome(t), 'file');
  await writeFile(file, 'x');
  await t.rejects(prepareHome(join(file, 'home')), {
    name: 'SettingError',
    message: /--home \/ SYNCD_HOME: cannot use/,
  });
});

t.test('a key is generated once, stored with mode 0600 and reused', async (t) => {
  const home = await tempHome(t);
  const first = await resolveApiKey(home, undefined);
  t.equal(first.source, 'generated');
  t.ok(first.apiKey.length >= 32, `${first.apiKey.length} characters`);
  const path = join(home, 'config.json');
  t.equal((await stat(path)).mode & 0o777, 0o600);
  t.same(JSON.parse(await readFile(path, 'utf8')), { version: 1, apiKey: first.apiKey });

  const second = await resolveApiKey(home, undefined);
  t.same(second, { apiKey: first.apiKey, source: 'config' });
  t.not(
    (await resolveApiKey(await tempHome(t), undefined)).apiKey,
    first.apiKey,
    'another home, another key',
  );
});

t.test('a given key wins and is not written', async (t) => {
  const home = await tempHome(t);
  t.same(await resolveApiKey(home, 'given-key-0123456789'), {
    apiKey: 'given-key-0123456789',
    source: 'setting',
  });
  await t.rejects(stat(join(home, 'config.json')), { code: 'ENOENT' });
});

t.test('other fields of config.json are kept when a key is added', async (t) => {
  const home = await tempHome(t);
  await writeFile(join(home, 'config.json'), '{"note": "mine"}');
  const { apiKey } = await resolveApiKey(home, undefined);
  t.same(JSON.parse(await readFile(join(home, 'config.json'), 'utf8')), { note: 'mine', version: 1, apiKey });
});

t.test('a malformed config.json is reported and never overwritten', async (t) => {
  for (const text of ['{"apiKey": ', '[]', 'null', '{"apiKey": 12}', '{"apiKey": "short"}']) {
    const home = await tempHome(t);
    const path = join(home, 'config.json');
    await writeFile(path, text);
    await t.rejects(
      resolveApiKey(home, undefined),
      { name: 'SettingError', message: new RegExp(path) },
      text,
    );
    await t.rejects(
      resolveApiKey(home, 'given-key-0123456789'),
      { name: 'SettingError' },
      'even with a key given',
    );
    t.equal(await readFile(path, 'utf8'), text, 'untouched');
  }
});

t.test('the address and url files are written, read and removed', async (t) => {
  const home = await tempHome(t);
  t.equal(await readAddressFile(home), undefined);
  await writeAddressFiles(home, '[::1]:8384', 'https://[::1]:8384');
  t.equal(await readFile(join(home, 'address'), 'utf8'), '[::1]:8384\n');
  t.equal(await readAddressFile(home), '[::1]:8384');
  t.equal(await readUrlFile(home), 'https://[::1]:8384');
  await writeFile(join(home, 'url'), 'http://127.0.0.1:9999\n');
  await removeAddressFiles(home, { address: '[::1]:8384', url: 'https://[::1]:8384' });
  t.equal(await readAddressFile(home), undefined);
  t.equal(await readUrlFile(home), 'http://127.0.0.1:9999', 'a file another service rewrote is left alone');
});

t.test('a new key never starts with a dash, which a command line would take for an option', async (t) => {
  for (let i = 0; i < 2000; i++) {
    const key = newApiKey();
    if (key.startsWith('-') || key.length !== 43) t.fail(key);
  }
  t.pass('2,000 keys');
});
