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
