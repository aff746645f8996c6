import {
  existsSync,
  lutimesSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { local, setMtime, versionedFolder } from './folder.ts';

t.test(
  'an archive keeps the name, overwrites the copy before, and takes the deletion time as mtime',
  async (t) => {
    const { root, versions, versioner, clock } = versionedFolder(
      t,
      { type: 'trashcan' },
      { sub: { 'f.txt': 'first' } },
    );
    setMtime(join(root, 'sub/f.txt'), local(2001, 1, 1));
    await versioner.archive('sub/f.txt');
    t.same(readdirSync(join(versions, 'sub')), ['f.txt'], 'untagged');
    t.equal(statSync(join(versions, 'sub/f.txt')).mtimeMs, clock.now.getTime(), 'mtime: the deletion time');
    clock.now = local(2022, 3, 16);
    writeFileSync(join(root, 'sub/f.txt'), 'second');
    await versioner.archive('sub/f.txt');
    t.same(readdirSync(join(versions, 'sub')), ['f.txt']);
    t.equal(readFileSync(join(versions, 'sub/f.txt'), 'utf8'), 'second', 'the copy before overwritten');
    t.equal(statSync(join(versions, 'sub/f.txt')).mtimeMs, local(2022, 3, 16).getTime());
    t.same(await versioner.versions(), {
      'sub/f.txt': [{ versionTime: local(2022, 3, 16), modTime: local(2022, 3, 16), size: 6 }],
    });
  },
);

t.test('cleanoutDays removes by mtime, and the directories it empties in the same pass', async (t) => {
  const { versions, versioner } = versionedFolder(
    t,
    { type: 'trashcan', params: { cleanoutDays: '1' } },
    {
      '.stversions': {
        'old.txt': 'o',
        'new.txt': 'n',
        a: { b: { 'old.txt': 'o' } },
        keep: { 'new.txt': 'n' },
      },
    },
  );
  for (const name of ['old.txt', 'a/b/old.txt'])
    setMtime(join(versions, name), local(2022, 3, 14, 10, 11, 11));
  for (const name of ['new.txt', 'keep/new.txt'])
    setMtime(join(versions, name), local(2022, 3, 14, 10, 11, 13));
  await versioner.clean();
  t.same(readdirSync(versions).sort(), ['keep', 'new.txt'], 'a day and a second: removed, with a/b and a');
});

t.test('cleanoutDays 0 (or unset) cleans nothing, not even empty directories', async (t) => {
  const { versions, versioner } = versionedFolder(
    t,
    { type: 'trashcan' },
    { '.stversions': { 'ancient.txt': 'o', empty: {} } },
  );
  setMtime(join(versions, 'ancient.txt'), local(1990, 1, 1));
  await versioner.clean();
  t.same(readdirSync(versions).sort(), ['ancient.txt', 'empty']);
});

t.test('restoring a file not on disk succeeds (v1.22, #7965) and leaves the trash', async (t) => {
  const { root, versions, versioner } = versionedFolder(
    t,
    { type: 'trashcan' },
    { sub: { 'f.txt': 'deleted' } },
  );
  await versioner.archive('sub/f.txt');
  await versioner.restore('sub/f.txt', local(2022, 3, 15, 10, 11, 12));
  t.equal(readFileSync(join(root, 'sub/f.txt'), 'utf8'), 'deleted');
  t.same(readdirSync(join(versions, 'sub')), []);
});

t.test('restoring onto a file makes that file the trash copy, in a subdirectory too', async (t) => {
  const { root, versions, versioner, clock } = versionedFolder(
    t,
    { type: 'trashcan' },
    { sub: { 'f.txt': 'old' } },
  );
  await versioner.archive('sub/f.txt');
  clock.now = local(2022, 3, 16);
  writeFileSync(join(root, 'sub/f.txt'), 'current');
  setMtime(join(root, 'sub/f.txt'), local(2022, 3, 15, 20));
  await versioner.restore('sub/f.txt', local(2022, 3, 15, 10, 11, 12));
  t.equal(readFileSync(join(root, 'sub/f.txt'), 'utf8'), 'old', 'restored');
  t.same(readdirSync(join(versions, 'sub')), ['f.txt'], 'no temporary name left');
  t.equal(
    readFileSync(join(versions, 'sub/f.txt'), 'utf8'),
    'current',
    'the replaced file is the trash copy',
  );
  t.equal(
    statSync(join(versions, 'sub/f.txt')).mtimeMs,
    local(2022, 3, 15, 20).getTime(),
    'with its own mtime',
  );
});

t.test('a restore that fails says so and leaves the current file in place', async (t) => {
  const { root, versions, versioner } = versionedFolder(t, { type: 'trashcan' }, { 'f.txt': 'current' });
  await t.rejects(versioner.restore('f.txt', local(2022, 1, 1)), {
    name: 'VersioningError',
    message: 'trashcan versioner: restore: version not found',
  });
  t.equal(readFileSync(join(root, 'f.txt'), 'utf8'), 'current', 'in place');
  t.notOk(existsSync(versions), 'the copy looked for first: nothing moved to the trash');
  mkdirSync(join(root, 'dir'));
  await t.rejects(versioner.restore('dir', local(2022, 1, 1)), {
    message: 'trashcan versioner: restore: cannot restore on top of a directory',
  });
});

t.test('a symlinked parent is never followed, nor a symlink archived', async (t) => {
  const { root, dir, versioner } = versionedFolder(
    t,
    { type: 'trashcan' },
    {},
    { outside: { 'f.txt': 'secret' } },
  );
  symlinkSync(join(dir, 'outside'), join(root, 'link'));
  await t.rejects(versioner.archive('link/f.txt'), {
    name: 'VersioningError',
    message: 'trashcan versioner: archive: traverses symlink: link',
  });
  await t.rejects(versioner.archive('link'), {
    message: 'trashcan versioner: archive: link is a symlink, not a regular file: not archived',
  });
  mkdirSync(join(root, 'd'));
  await t.rejects(versioner.archive('d'), { message: /d is a directory, not a regular file/ });
  t.equal(readFileSync(join(dir, 'outside/f.txt'), 'utf8'), 'secret');
  t.ok(existsSync(join(root, 'link')) && existsSync(join(root, 'd')));
  t.notOk(existsSync(join(root, '.stversions')), 'nothing archived');
});

t.test('the cleanout removes an old symlink as itself, and never walks through one', async (t) => {
  const { versions, dir, versioner } = versionedFolder(
    t,
    { type: 'trashcan', params: { cleanoutDays: '1' } },
    { '.stversions': {} },
    { outside: { 'old.txt': 'o' } },
  );
  setMtime(join(dir, 'outside/old.txt'), local(2000, 1, 1));
  symlinkSync(join(dir, 'outside'), join(versions, 'new-link'));
  symlinkSync(join(dir, 'outside/old.txt'), join(versions, 'old-link'));
  lutimesSync(join(versions, 'old-link'), local(2000, 1, 1), local(2000, 1, 1));
  await versioner.clean();
  t.same(readdirSync(versions), ['new-link'], 'the old link removed, the new one kept');
  t.equal(readFileSync(join(dir, 'outside/old.txt'), 'utf8'), 'o', 'what they point to untouched');
});
