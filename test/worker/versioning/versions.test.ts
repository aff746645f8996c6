import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { local, setMtime, versionedFolder } from './folder.ts';

t.test('versions() lists every version by original name, NFC, times to the second', async (t) => {
  const { versions, versioner } = versionedFolder(
    t,
    { type: 'simple' },
    {
      '.stversions': {
        'f~20220301-120000.txt': 'one',
        'f~20220302-120000.txt': 'two!',
        sub: { 'cafe\u0301~20220301-120000': 'nfd' },
        'trash.txt': 'untagged',
        'g.txt~20140101-010101': 'old style',
        'bad~notatime.txt': 'dropped',
        empty: {},
      },
    },
  );
  setMtime(join(versions, 'f~20220301-120000.txt'), new Date(local(2022, 2, 1).getTime() + 700));
  setMtime(join(versions, 'trash.txt'), local(2022, 2, 2, 3, 4, 5));
  const listed = await versioner.versions();
  t.same(Object.keys(listed).sort(), ['f.txt', 'g.txt', 'sub/caf\u00e9', 'trash.txt']);
  t.same(
    listed['f.txt']?.find((v) => v.size === 3),
    {
      versionTime: local(2022, 3, 1, 12),
      modTime: local(2022, 2, 1),
      size: 3,
    },
  );
  t.equal(listed['f.txt']?.length, 2);
  t.same(listed['trash.txt'], [
    { versionTime: local(2022, 2, 2, 3, 4, 5), modTime: local(2022, 2, 2, 3, 4, 5), size: 8 },
  ]);
  t.same(listed['g.txt']?.[0]?.versionTime, local(2014, 1, 1, 1, 1, 1));
  t.ok(listed['sub/caf\u00e9'], 'NFC');
});

t.test('versions() is {} without a versions directory, and never follows a symlink in it', async (t) => {
  const { versions, dir, versioner } = versionedFolder(
    t,
    { type: 'staggered' },
    {},
    { outside: { 'secret~20220301-120000.txt': 's', 'file~20220301-120000': 'f' } },
  );
  t.same(await versioner.versions(), {});
  t.notOk(existsSync(versions), 'not made by listing');
  mkdirSync(versions);
  symlinkSync(join(dir, 'outside'), join(versions, 'link'));
  symlinkSync(join(dir, 'outside/file~20220301-120000'), join(versions, 'file~20220301-120000'));
  writeFileSync(join(versions, 'a~20220301-120000'), 'a');
  t.same(Object.keys(await versioner.versions()), ['a']);
  t.ok(existsSync(join(dir, 'outside/secret~20220301-120000.txt')));
});

t.test('fsPath relative to the folder root', async (t) => {
  const relative = versionedFolder(t, { type: 'simple', fsPath: '../kept' }, { 'f.txt': 'x' });
  await relative.versioner.archive('f.txt');
  t.same(readdirSync(join(relative.dir, 'kept')), ['f~20220315-101112.txt']);
  t.notOk(existsSync(relative.versions));
  t.same(Object.keys(await relative.versioner.versions()), ['f.txt']);
  await relative.versioner.restore('f.txt', local(2022, 3, 15, 10, 11, 12));
  t.equal(readFileSync(join(relative.root, 'f.txt'), 'utf8'), 'x');
});

t.test('fsPath inside the folder', async (t) => {
  const inside = versionedFolder(t, { type: 'trashcan', fsPath: 'my/versions' }, { 'f.txt': 'y' });
  await inside.versioner.archive('f.txt');
  t.equal(readFileSync(join(inside.root, 'my/versions/f.txt'), 'utf8'), 'y');
  t.equal(statSync(join(inside.root, 'my/versions')).mode & 0o777, 0o755);
});

t.test('fsPath absolute', async (t) => {
  const target = join(t.testdirName, 'elsewhere');
  const absolute = versionedFolder(
    t,
    { type: 'staggered', fsPath: join(target, 'deep/er/versions') },
    { 'g.txt': 'z' },
    { elsewhere: {} },
  );
  await absolute.versioner.archive('g.txt');
  t.same(readdirSync(join(target, 'deep/er/versions')), ['g~20220315-101112.txt'], 'made with its parents');
  t.same(Object.keys(await absolute.versioner.versions()), ['g.txt']);
});

t.test('a custom versions directory in the folder is never reached through a symlink', async (t) => {
  const { root, dir, versioner } = versionedFolder(
    t,
    { type: 'simple', fsPath: 'versions' },
    { 'f.txt': 'x' },
    { elsewhere: {} },
  );
  symlinkSync(join(dir, 'elsewhere'), join(root, 'versions'));
  await t.rejects(versioner.archive('f.txt'), {
    message: 'simple versioner: archive: traverses symlink: versions',
  });
  await t.rejects(versioner.versions(), {
    message: 'simple versioner: get versions: traverses symlink: versions',
  });
  t.same(readdirSync(join(dir, 'elsewhere')), []);
  t.ok(existsSync(join(root, 'f.txt')));
});

t.test('the default .stversions may be a symlink the user made, as in Syncthing', async (t) => {
  const { root, dir, versioner } = versionedFolder(t, { type: 'trashcan' }, { 'f.txt': 'x' }, { disk: {} });
  symlinkSync(join(dir, 'disk'), join(root, '.stversions'));
  await versioner.archive('f.txt');
  t.same(readdirSync(join(dir, 'disk')), ['f.txt']);
});

// /dev/shm is a tmpfs, another device than the test directory's: a rename there fails with EXDEV.
const shm = existsSync('/dev/shm') && statSync('/dev/shm').dev !== statSync(process.cwd()).dev;
t.test(
  'across devices the file is copied then removed, its mtime kept',
  { skip: !shm && 'no /dev/shm' },
  async (t) => {
    const target = mkdtempSync('/dev/shm/syncd-versions-');
    t.teardown(() => rmSync(target, { recursive: true, force: true }));
    const { root, versioner } = versionedFolder(
      t,
      { type: 'simple', fsPath: target },
      { sub: { 'f.txt': 'data'.repeat(300000) } },
    );
    setMtime(join(root, 'sub/f.txt'), local(2010, 5, 6, 7, 8, 9));
    await versioner.archive('sub/f.txt');
    t.notOk(existsSync(join(root, 'sub/f.txt')));
    const version = join(target, 'sub/f~20220315-101112.txt');
    t.equal(readFileSync(version, 'utf8'), 'data'.repeat(300000));
    t.equal(statSync(version).mtimeMs, local(2010, 5, 6, 7, 8, 9).getTime());
    await versioner.restore('sub/f.txt', local(2022, 3, 15, 10, 11, 12));
    t.equal(statSync(join(root, 'sub/f.txt')).mtimeMs, local(2010, 5, 6, 7, 8, 9).getTime(), 'and back');
    t.same(readdirSync(join(target, 'sub')), []);
  },
);
