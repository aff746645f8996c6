import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { simpleToRemove } from '../../../worker/versioning/simple.ts';
import { local, setMtime, versionedFolder } from './folder.ts';

t.test('an archive is named for the archive moment, before the extension, and keeps the mtime', async (t) => {
  const { root, versions, versioner, warnings } = versionedFolder(
    t,
    { type: 'simple' },
    { 'a.tar.gz': 'a', '.bashrc': 'b', noext: 'c', sub: { deep: { 'f.txt': 'd' } } },
  );
  const mtime = local(2019, 6, 7, 8, 9, 10);
  for (const name of ['a.tar.gz', '.bashrc', 'noext', 'sub/deep/f.txt']) {
    setMtime(join(root, name), mtime);
    await versioner.archive(name);
    t.notOk(existsSync(join(root, name)), `${name} moved out of the folder`);
  }
  t.same(readdirSync(versions).sort(), [
    'a.tar~20220315-101112.gz',
    'noext~20220315-101112',
    'sub',
    '~20220315-101112.bashrc',
  ]);
  t.same(readdirSync(join(versions, 'sub/deep')), ['f~20220315-101112.txt']);
  t.equal(readFileSync(join(versions, 'sub/deep/f~20220315-101112.txt'), 'utf8'), 'd');
  t.equal(statSync(join(versions, 'noext~20220315-101112')).mtimeMs, mtime.getTime(), 'the original mtime');
  t.equal(statSync(versions).mode & 0o777, 0o755, 'the versions directory made 0755');
  await versioner.archive('missing.txt');
  await versioner.archive('nodir/missing.txt');
  t.same(warnings, []);
});

t.test('keep: only the newest versions of that file are kept, at each archive', async (t) => {
  const { root, versions, versioner, clock } = versionedFolder(
    t,
    { type: 'simple', params: { keep: '2' } },
    {
      '.stversions': { 'f~20200101-000000.txt': 'oldest', 'g~20200101-000000.txt': 'another file' },
    },
  );
  for (const [second, content] of [
    [1, 'one'],
    [2, 'two'],
  ] as const) {
    clock.now = local(2022, 3, 15, 10, 11, second);
    writeFileSync(join(root, 'f.txt'), content);
    await versioner.archive('f.txt');
  }
  t.same(
    readdirSync(versions).sort(),
    ['f~20220315-101101.txt', 'f~20220315-101102.txt', 'g~20200101-000000.txt'],
    'the oldest of f removed, g untouched',
  );
});

t.test('keep 0 keeps none; an unset or unreadable keep is 5', async (t) => {
  const none = versionedFolder(t, { type: 'simple', params: { keep: '0' } }, { 'f.txt': 'x' });
  await none.versioner.archive('f.txt');
  t.same(readdirSync(none.versions), [], 'archived, then removed');
  const names = Array.from({ length: 7 }, (_, i) => `f~2020010${i + 1}-000000.txt`);
  t.same(simpleToRemove(names, local(2022, 1, 1), 5, 0), names.slice(0, 2));
  for (const keep of [undefined, '', 'five', '-1']) {
    const { versioner, versions, root } = versionedFolder(
      t,
      { type: 'simple', params: keep === undefined ? {} : { keep } },
      { '.stversions': Object.fromEntries(names.map((name) => [name, 'old'])), 'f.txt': 'new' },
    );
    await versioner.archive('f.txt');
    t.equal(readdirSync(versions).length, 5, `keep ${JSON.stringify(keep)}: 5 kept`);
    t.notOk(existsSync(join(root, 'f.txt')));
  }
});

t.test('cleanoutDays judges by the archive moment in the tag, not the mtime (v1.22, #7988)', async (t) => {
  const { root, versions, versioner, clock } = versionedFolder(
    t,
    { type: 'simple', params: { keep: '10', cleanoutDays: '2' } },
    {
      'old-file.txt': 'last changed long ago',
      '.stversions': {
        'x~20220312-101111.txt': 'archived 3 days ago',
        'x~20220314-101111.txt': 'archived a day ago',
        sub: { 'y~20220301-000000': 'archived long ago' },
        other: { 'z~20220315-000000': 'archived today' },
      },
    },
  );
  setMtime(join(root, 'old-file.txt'), local(2001, 1, 1));
  await versioner.archive('old-file.txt');
  await versioner.clean();
  t.same(
    readdirSync(versions).sort(),
    ['old-file~20220315-101112.txt', 'other', 'sub', 'x~20220314-101111.txt'],
    'the version of an old file archived now is kept; the one tagged 3 days ago removed',
  );
  t.same(readdirSync(join(versions, 'sub')), [], 'y removed; sub emptied by this pass');
  clock.now = local(2022, 3, 15, 10, 20);
  await versioner.clean();
  t.same(readdirSync(versions).sort(), ['old-file~20220315-101112.txt', 'other', 'x~20220314-101111.txt']);
  t.equal(statSync(join(versions, 'old-file~20220315-101112.txt')).mtimeMs, local(2001, 1, 1).getTime());
});

t.test(
  'the cleanout enforces keep too (v1.22), and without cleanoutDays removes nothing by age',
  async (t) => {
    const { versions, versioner } = versionedFolder(
      t,
      { type: 'simple', params: { keep: '1' } },
      {
        '.stversions': {
          'x~20000101-000000.txt': 'old',
          'x~20000102-000000.txt': 'newer',
          'untagged.txt': 'left',
        },
      },
    );
    await versioner.clean();
    t.same(readdirSync(versions).sort(), ['untagged.txt', 'x~20000102-000000.txt']);
  },
);
