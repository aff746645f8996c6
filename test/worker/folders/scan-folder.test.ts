import { chmod, mkdir, mkdtemp, readdir, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { execa } from 'execa';
import { packageRoot } from '../../../shared/paths.ts';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { IndexDb } from '../../../worker/index-db/index-db.ts';
import { HasherPool } from '../../../worker/scanner/hasher-pool.ts';
import { scanFolder } from '../../../worker/folders/scan-folder.ts';
import { indexedFolder } from '../../helpers/indexed-folder.ts';

const me = 0x0123456789abcdefn;

function setup(t: Test) {
  return indexedFolder(t, { threads: 2, shortId: me });
}

t.test('a first scan records every file, directory and symlink; a second finds nothing new', async (t) => {
  const { path, db, scan } = await setup(t);
  await mkdir(join(path, 'dir', 'empty dir'), { recursive: true });
  await writeFile(join(path, 'dir', 'naïve file.txt'), 'x'.repeat(200_000));
  await writeFile(join(path, 'empty'), '');
  await symlink('dir', join(path, 'link'));
  await symlink('loop', join(path, 'loop'));
  await writeFile(join(path, '.syncthing.partial.tmp'), 'temporary');
  await writeFile(join(path, '.stignore'), '');
  const first = await scan();
  t.same(
    first.changes.map((c) => `${c.action} ${c.type} ${c.name}`),
    [
      'added directory dir',
      'added directory dir/empty dir',
      'added file dir/naïve file.txt',
      'added file empty',
      'added symlink link',
      'added symlink loop',
    ],
    'in name order; marker, .stignore and temporary files left out; a symlink loop is a symlink',
  );
  t.same(first.problems, []);
  t.match(db.file('f', 'dir/naïve file.txt'), {
    size: 200_000,
    blockSize: 131072,
    modifiedBy: me,
    blocks: { length: 2 },
  });
  t.match(db.file('f', 'empty'), { size: 0, blocks: [{ size: 0 }] });
  t.match(db.file('f', 'link'), { type: 'symlink', symlinkTarget: 'dir' });
  t.equal(db.folder('f').sequence, 6);
  t.same((await scan()).changes, [], 'unchanged: nothing hashed, nothing written');
  t.equal(db.folder('f').sequence, 6);
});

t.test('a change gets a new version and sequence; a deletion is recorded, not forgotten', async (t) => {
  const { path, db, scan } = await setup(t);
  await writeFile(join(path, 'a'), 'one');
  await writeFile(join(path, 'b'), 'two');
  await scan();
  const before = db.file('f', 'a');
  await writeFile(join(path, 'a'), 'changed');
  await rm(join(path, 'b'));
  const second = await scan();
  t.same(
    second.changes.map((c) => `${c.action} ${c.name}`),
    ['modified a', 'deleted b'],
  );
  const after = db.file('f', 'a');
  t.ok((after?.version[0]?.value ?? 0n) > (before?.version[0]?.value ?? 0n), 'the counter went up');
  t.match(db.file('f', 'b'), { deleted: true, size: 0, blocks: [], sequence: 4 });
  t.same((await scan()).changes, [], 'a deletion is recorded once');
  await writeFile(join(path, 'b'), 'back');
  t.same(
    (await scan()).changes.map((c) => `${c.action} ${c.name}`),
    ['added b'],
    'and comes back as added',
  );
});

t.test('modification time and permissions count; a scan of a sub path sees only that', async (t) => {
  const { path, db, scan } = await setup(t);
  await mkdir(join(path, 'sub'));
  await writeFile(join(path, 'sub', 'x'), 'x');
  await writeFile(join(path, 'y'), 'y');
  await scan();
  await utimes(join(path, 'y'), new Date(1_600_000_000_000), new Date(1_600_000_000_000));
  await rm(join(path, 'sub', 'x'));
  t.same(
    (await scan(['y'])).changes.map((c) => `${c.action} ${c.name}`),
    ['modified y'],
    'sub/x is gone but outside the scan',
  );
  t.equal(db.file('f', 'sub/x')?.deleted, false);
  t.same(
    (await scan(['sub'])).changes.map((c) => `${c.action} ${c.name}`),
    ['deleted sub/x'],
  );
});

t.test('a name that is not valid UTF-8 is a problem named, and the scan goes on', async (t) => {
  const { path, db, scan } = await setup(t);
  await writeFile(
    Buffer.concat([Buffer.from(`${path}/bad-`), Buffer.from([0xff, 0xfe]), Buffer.from('.txt')]),
    'x',
  );
  await writeFile(join(path, 'good'), 'x');
  const result = await scan();
  t.same(
    result.changes.map((c) => c.name),
    ['good'],
  );
  t.match(result.problems, [{ name: /^bad-/, error: /not valid UTF-8/ }]);
  t.equal(db.files('f').length, 1);
});

t.test('a symlink whose target is not UTF-8 is a problem named, its record kept as it was', async (t) => {
  const { path, db, scan } = await setup(t);
  await symlink('first', join(path, 'link'));
  await scan();
  await rm(join(path, 'link'));
  // Node takes a Buffer target as its bytes; a string would be written as UTF-8.
  await symlink(Buffer.from([0x74, 0xff, 0x2e]) as unknown as string, join(path, 'link'));
  const result = await scan();
  t.same(result.changes, [], 'not recorded with U+FFFD in its target, nor as deleted');
  t.match(result.problems, [{ name: 'link', error: /target is not valid UTF-8/ }]);
  t.match(db.file('f', 'link'), { deleted: false, symlinkTarget: 'first' });
});

t.test('a file that cannot be hashed keeps its old record and is reported', async (t) => {
  const { path, db, scan } = await setup(t);
  await writeFile(join(path, 'a'), 'one');
  await scan();
  const hasher = new HasherPool(1);
  await hasher.close();
  await writeFile(join(path, 'a'), 'two, longer');
  const result = await scanFolder({
    folder: { id: 'f', path, markerName: '.stfolder', ignorePerms: false, modTimeWindowS: 0 },
    db,
    hasher,
    shortId: me,
  });
  t.match(result.problems, [{ name: 'a' }]);
  t.same(result.changes, []);
  t.match(db.file('f', 'a'), { size: 3, deleted: false }, 'not recorded as deleted');
});

t.test(
  'ignored names are not indexed; a file that becomes ignored is kept as invalid, not deleted',
  async (t) => {
    const { path, db, scan } = await setup(t);
    await mkdir(join(path, 'build', 'deep'), { recursive: true });
    await writeFile(join(path, 'build', 'deep', 'out.o'), 'o');
    await writeFile(join(path, 'notes.txt'), 'n');
    await writeFile(join(path, 'scratch.tmp'), 't');
    await writeFile(join(path, '.stignore'), 'build\n*.tmp\n');
    t.same(
      (await scan()).changes.map((c) => c.name),
      ['notes.txt'],
    );

    await writeFile(join(path, '.stignore'), '*.txt\n');
    const second = await scan();
    t.same(
      second.changes.map((c) => `${c.action} ${c.name}`),
      ['added build', 'added build/deep', 'added build/deep/out.o', 'ignored notes.txt', 'added scratch.tmp'],
    );
    t.match(db.file('f', 'notes.txt'), { invalid: true, deleted: false });
    t.same(
      db.counts('f'),
      { files: 2, directories: 2, symlinks: 0, deleted: 0, bytes: 2 },
      'ignored files are not counted',
    );
    t.same((await scan()).changes, [], 'recorded once');

    await writeFile(join(path, '.stignore'), '');
    t.same(
      (await scan()).changes.map((c) => `${c.action} ${c.name}`),
      ['added notes.txt'],
      'no longer ignored',
    );
    t.match(db.file('f', 'notes.txt'), { invalid: false });
  },
);

t.test('a negated pattern reaches into an ignored directory', async (t) => {
  const { path, scan } = await setup(t);
  await mkdir(join(path, 'vendor', 'ours'), { recursive: true });
  await writeFile(join(path, 'vendor', 'theirs.js'), 'x');
  await writeFile(join(path, 'vendor', 'ours', 'keep.js'), 'x');
  await writeFile(join(path, '.stignore'), '!vendor/ours/keep.js\nvendor\n');
  t.same(
    (await scan()).changes.map((c) => c.name),
    ['vendor/ours/keep.js'],
  );
});

t.test('a .stignore that cannot be used stops the scan: nothing is indexed in its stead', async (t) => {
  const { path, db, scan } = await setup(t);
  await writeFile(join(path, 'secret'), 's');
  await writeFile(join(path, '.stignore'), 'secret\n#include nowhere\n');
  await t.rejects(scan(), { name: 'IgnoreError', message: /cannot read nowhere/ });
  t.same(db.files('f'), []);
});

t.test('what cannot be read is a problem named, never a deletion', async (t) => {
  const base = await mkdtemp(join(tmpdir(), 'syncd-perms-'));
  t.teardown(() => rm(base, { recursive: true, force: true }));
  const path = join(base, 'folder');
  await mkdir(join(path, 'locked'), { recursive: true });
  await writeFile(join(path, 'locked', 'inside'), 'i');
  await writeFile(join(path, 'secret'), 's');
  await writeFile(join(path, 'open'), 'o');
  const index = join(base, 'index', 'index.sqlite');
  await mkdir(join(base, 'index'));
  // Indexed while readable.
  const db = await IndexDb.open(index);
  const hasher = new HasherPool(1);
  await scanFolder({
    folder: { id: 'f', path, markerName: '.stfolder', ignorePerms: false, modTimeWindowS: 0 },
    db,
    hasher,
    shortId: 1n,
  });
  await hasher.close();
  db.close();
  await writeFile(join(path, 'secret'), 'changed, and now unreadable');
  await chmod(join(path, 'secret'), 0o000);
  await chmod(join(path, 'locked'), 0o000);
  t.teardown(() => chmod(join(path, 'locked'), 0o755).catch(() => {}));
  // Root reads everything: the scan runs as nobody then, with the index made its own.
  const asRoot = process.getuid?.() === 0;
  await mkdir(join(base, 'tmp'), { mode: 0o777 });
  await chmod(join(base, 'tmp'), 0o777);
  if (asRoot) {
    await chmod(base, 0o755);
    await execa('chown', ['-R', 'nobody', join(base, 'index')]);
  }
  const script = join(packageRoot, 'test', 'fixtures', 'scan-once.ts');
  const run = await execa(process.execPath, ['--import', 'tsx', script, path, index], {
    cwd: packageRoot,
    reject: false,
    extendEnv: false,
    // Its temporary files (tsx's cache) in the test's own folder, removed with it.
    env: { PATH: process.env.PATH ?? '', HOME: base, TMPDIR: join(base, 'tmp') },
    ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
  });
  t.equal(run.exitCode, 0, run.stderr);
  const result = JSON.parse(run.stdout) as {
    changes: unknown[];
    problems: Array<{ name: string; error: string }>;
    deleted: string[];
  };
  t.same(result.problems.map((p) => [p.name, p.error]).sort(), [
    ['locked', 'permission denied'],
    ['secret', 'permission denied'],
  ]);
  t.same(result.deleted, [], 'neither the unreadable file nor what the locked directory holds is deleted');
  t.same(
    result.changes,
    [{ name: 'locked', type: 'directory', action: 'modified' }],
    "the old records are kept: only the directory's new permissions are recorded",
  );
});

t.test('a file that disappears while the folder is scanned is named, and recorded as gone', async (t) => {
  const { path, db, scan, folder } = await setup(t);
  await writeFile(join(path, 'short-lived'), 'one');
  await scan();
  await writeFile(join(path, 'short-lived'), 'changed');
  // The file goes between the walk that saw it and the thread that reads it.
  class Vanishing extends HasherPool {
    override async hash(file: string, size: number, blockSize: number) {
      await rm(file);
      return super.hash(file, size, blockSize);
    }
  }
  const hasher = new Vanishing(1);
  t.teardown(() => hasher.close());
  const result = await scanFolder({ folder, db, hasher, shortId: me });
  t.match(result.problems, [{ name: 'short-lived', error: /disappeared while the folder was scanned/ }]);
  t.match(db.file('f', 'short-lived'), { deleted: true });
});

t.test('a name not in Unicode NFC is renamed to it, as Syncthing does; or named as a problem', async (t) => {
  const { path, db, scan, folder, hasher } = await setup(t);
  const nfd = 'cafe\u0301'; // "café" with a combining accent
  const nfc = nfd.normalize('NFC');
  await mkdir(join(path, `dir ${nfd}`));
  await writeFile(join(path, `dir ${nfd}`, `${nfd}.txt`), 'decomposed');
  const result = await scan();
  t.same(result.problems, []);
  t.same(
    result.changes.map((change) => change.name),
    [`dir ${nfc}`, `dir ${nfc}/${nfc}.txt`],
    'indexed by their NFC names',
  );
  t.same(await readdir(join(path, `dir ${nfc}`)), [`${nfc}.txt`], 'and renamed so on disk');
  t.ok(db.file('f', `dir ${nfc}/${nfc}.txt`));

  // Both forms there: the decomposed one is left alone and named.
  await writeFile(join(path, `${nfd}.md`), 'decomposed');
  await writeFile(join(path, `${nfc}.md`), 'composed');
  const both = await scan();
  t.match(both.problems, [{ name: `${nfd}.md`, error: /NFC form .* exists too/ }]);
  // Without autoNormalize: named, and left out.
  const off = await scanFolder({ folder: { ...folder, autoNormalize: false }, db, hasher, shortId: me });
  t.match(off.problems, [{ name: `${nfd}.md`, error: /autoNormalize is off/ }]);
});

t.test('temporary files older than keepTemporariesH go at a scan; newer ones stay', async (t) => {
  const { path, db, hasher, folder } = await setup(t);
  await mkdir(join(path, 'sub'));
  const hours = (h: number) => (Date.now() - h * 3_600_000) / 1000;
  for (const [name, age] of [
    ['.syncthing.old.tmp', 25],
    ['sub/~syncthing~old.tmp', 30],
    ['.syncthing.new.tmp', 1],
  ] as const) {
    await writeFile(join(path, name), 'partial');
    await utimes(join(path, name), hours(age), hours(age));
  }
  await scanFolder({ folder, db, hasher, shortId: me });
  t.equal((await readdir(path)).length, 4, 'without keepTemporariesH (a scan of a test), all stay');
  const scanned = await scanFolder({ folder: { ...folder, keepTemporariesH: 24 }, db, hasher, shortId: me });
  t.same((await readdir(path)).sort(), ['.stfolder', '.syncthing.new.tmp', 'sub'], 'the old ones went');
  t.same(await readdir(join(path, 'sub')), [], 'in subdirectories too');
  t.same(scanned.changes, [], 'and none was ever indexed');
});

t.test('a file asked to be read again is, though its size and time are unchanged', async (t) => {
  const { path, db, hasher, folder } = await setup(t);
  await writeFile(join(path, 'a.txt'), 'first');
  await utimes(join(path, 'a.txt'), 1_700_000_000, 1_700_000_000);
  await scanFolder({ folder, db, hasher, shortId: me });
  await writeFile(join(path, 'a.txt'), 'other');
  await utimes(join(path, 'a.txt'), 1_700_000_000, 1_700_000_000);
  t.same((await scanFolder({ folder, db, hasher, shortId: me })).changes, [], 'a scan goes by size and time');
  const reread = await scanFolder({ folder, db, hasher, shortId: me, rehash: new Set(['a.txt']) });
  t.same(
    reread.changes,
    [{ name: 'a.txt', type: 'file', action: 'modified' }],
    'read again, the change is found',
  );
});
