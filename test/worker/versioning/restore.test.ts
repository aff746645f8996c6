import { existsSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { local, setMtime, versionedFolder } from './folder.ts';

const versionTime = local(2022, 3, 1, 12, 0, 0);

t.test(
  'the current file is archived first, tagged now; the version is moved back with its mtime',
  async (t) => {
    const { root, versions, versioner, warnings } = versionedFolder(
      t,
      { type: 'staggered' },
      { sub: { 'f.txt': 'current' }, '.stversions': { sub: { 'f~20220301-120000.txt': 'the version' } } },
    );
    setMtime(join(versions, 'sub/f~20220301-120000.txt'), local(2022, 2, 28));
    // A time with milliseconds, as the GUI sends it, finds the tag of its second.
    await versioner.restore('sub/f.txt', new Date(versionTime.getTime() + 250));
    t.equal(readFileSync(join(root, 'sub/f.txt'), 'utf8'), 'the version');
    t.equal(statSync(join(root, 'sub/f.txt')).mtimeMs, local(2022, 2, 28).getTime(), 'its mtime');
    t.same(
      readdirSync(join(versions, 'sub')),
      ['f~20220315-101112.txt'],
      'moved out; the current file archived now',
    );
    t.equal(readFileSync(join(versions, 'sub/f~20220315-101112.txt'), 'utf8'), 'current');
    t.same(warnings, []);
  },
);

t.test(
  'a version restored within the second it was archived in: the current file takes its name after',
  async (t) => {
    // A pull replaced a.txt, archiving the first version, and a user restores it at once: the current
    // file's archive name is the version's own (util.go archives first, and overwrites it).
    const { root, versions, versioner, clock } = versionedFolder(
      t,
      { type: 'simple', params: { keep: '5' } },
      { 'a.txt': 'first version\n' },
    );
    setMtime(join(root, 'a.txt'), local(2022, 3, 1));
    await versioner.archive('a.txt');
    writeFileSync(join(root, 'a.txt'), 'second version\n');
    setMtime(join(root, 'a.txt'), local(2022, 3, 15, 10, 11, 10));
    const listed = await versioner.versions();
    t.same(readdirSync(versions), ['a~20220315-101112.txt']);
    clock.now = new Date(clock.now.getTime() + 900);
    await versioner.restore('a.txt', listed['a.txt']?.[0]?.versionTime as Date);
    t.equal(readFileSync(join(root, 'a.txt'), 'utf8'), 'first version\n', 'the version is back');
    t.equal(statSync(join(root, 'a.txt')).mtimeMs, local(2022, 3, 1).getTime(), 'with its mtime');
    t.same(readdirSync(versions), ['a~20220315-101112.txt'], 'one version: no temporary name left');
    t.equal(
      readFileSync(join(versions, 'a~20220315-101112.txt'), 'utf8'),
      'second version\n',
      'the replaced file, archived now',
    );
    t.equal(
      statSync(join(versions, 'a~20220315-101112.txt')).mtimeMs,
      local(2022, 3, 15, 10, 11, 10).getTime(),
      'with its own mtime, as archiveFile keeps it',
    );
  },
);

t.test('a restore into a missing directory makes it; a symlink there is removed, not archived', async (t) => {
  const { root, versions, versioner } = versionedFolder(
    t,
    { type: 'simple' },
    { '.stversions': { a: { b: { 'f~20220301-120000.txt': 'v' } }, 'l~20220301-120000': 'w' } },
  );
  await versioner.restore('a/b/f.txt', versionTime);
  t.equal(readFileSync(join(root, 'a/b/f.txt'), 'utf8'), 'v');
  symlinkSync('/etc/passwd', join(root, 'l'));
  await versioner.restore('l', versionTime);
  t.equal(readFileSync(join(root, 'l'), 'utf8'), 'w');
  t.same(readdirSync(versions).sort(), ['a'], 'the symlink went, unarchived');
});

t.test('errors: version not found, a directory in the way, a symlinked parent', async (t) => {
  const { root, dir, versions, versioner } = versionedFolder(
    t,
    { type: 'simple' },
    { d: {}, 'f.txt': 'current', '.stversions': { 'g~20220301-120000.txt': 'v' } },
    { outside: {} },
  );
  await t.rejects(versioner.restore('f.txt', versionTime), {
    name: 'VersioningError',
    message: 'simple versioner: restore: version not found',
  });
  t.notOk(
    existsSync(join(versions, 'f~20220315-101112.txt')),
    'the current file is not archived for a version that is not there (Syncthing archived it first)',
  );
  t.equal(readFileSync(join(root, 'f.txt'), 'utf8'), 'current', 'it stays in the folder');
  await t.rejects(versioner.restore('d', versionTime), {
    message: 'simple versioner: restore: cannot restore on top of a directory',
  });
  symlinkSync(join(dir, 'outside'), join(root, 'link'));
  await t.rejects(versioner.restore('link/g.txt', versionTime), {
    message: 'simple versioner: restore: traverses symlink: link',
  });
  t.same(readdirSync(join(dir, 'outside')), []);
  // An old-style `g.txt~TAG` is listed but never found, as in Syncthing.
  writeFileSync(join(versions, 'h.txt~20220301-120000'), 'old style');
  await t.rejects(versioner.restore('h.txt', versionTime), { message: /version not found/ });
});

t.test(
  'an untagged (trashcan) copy is restored by a simple versioner when its mtime is the time',
  async (t) => {
    const { root, versions, versioner } = versionedFolder(
      t,
      { type: 'simple' },
      { '.stversions': { 'u.txt': 'u' } },
    );
    setMtime(join(versions, 'u.txt'), new Date(versionTime.getTime() + 400));
    await t.rejects(versioner.restore('u.txt', new Date(versionTime.getTime() + 1)), {
      message: /version not found/,
    });
    await versioner.restore('u.txt', versionTime);
    t.equal(readFileSync(join(root, 'u.txt'), 'utf8'), 'u');
  },
);
