import { chmod, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { ConfigStore, SaveRefused } from '../../supervisor/config-store.ts';
import { testConfiguration } from '../helpers/config.ts';

const changed = (progressUpdateIntervalS: number) => {
  const config = testConfiguration();
  config.options.progressUpdateIntervalS = progressUpdateIntervalS;
  return config;
};

t.test('saves are written whole, one revision at a time; a stale one is refused', async (t) => {
  const path = join(t.testdir(), 'config.json');
  const store = new ConfigStore(path, testConfiguration());
  const [first, stale] = await Promise.all([store.save(changed(1), 1), store.save(changed(2), 1)]);
  t.same(first, { ok: true, revision: 2 });
  t.match(stale, { ok: false, status: 409 });
  t.equal(store.config.options.progressUpdateIntervalS, 1);
  t.equal(JSON.parse(await readFile(path, 'utf8')).config.options.progressUpdateIntervalS, 1);
  t.same(await store.save(changed(3), 2), { ok: true, revision: 3 });
});

t.test(
  'what a save moves is prepared first: refused, nothing is written; written, it is committed',
  async (t) => {
    const path = join(t.testdir(), 'config.json');
    const store = new ConfigStore(path, testConfiguration());
    const steps: string[] = [];
    store.prepareWith(async (_from, to) => {
      if (to.options.progressUpdateIntervalS === 9) throw new SaveRefused('gui.address: cannot listen there');
      return { commit: () => void steps.push('commit'), abort: () => void steps.push('abort') };
    });
    t.same(await store.save(changed(9), 1), {
      ok: false,
      status: 400,
      message: 'gui.address: cannot listen there',
    });
    await t.rejects(readFile(path), { code: 'ENOENT' }, 'nothing written');
    t.same(await store.save(changed(1), 1), { ok: true, revision: 2 });
    t.same(steps, ['commit']);

    // A file that cannot be written undoes the step and keeps the configuration.
    if (process.getuid?.() !== 0) {
      await chmod(t.testdirName, 0o500);
      t.teardown(() => chmod(t.testdirName, 0o700));
      t.match(await store.save(changed(2), 2), { ok: false, status: 500, message: /cannot be written/ });
      t.same(steps, ['commit', 'abort']);
      t.equal(store.config.options.progressUpdateIntervalS, 1);
    }
  },
);
