import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { closeFd, writeAt } from '../../../worker/files/fd.ts';
import { FolderFs, isInternal, temporaryName } from '../../../worker/files/folder-fs.ts';

// A folder with a canary directory beside it: nothing done through the folder may reach the canary.
function folderBesideCanary(t: Test) {
  const dir = t.testdir({ folder: { real: { 'f.txt': 'inside' } }, canary: { 'secret.txt': 'outside' } });
  const root = join(dir, 'folder');
  const canary = join(dir, 'canary');
  symlinkSync(canary, join(root, 'link'));
  symlinkSync('../canary', join(root, 'relative'));
  writeFileSync(join(root, 'file'), 'a file, not a directory');
  return { root, canary, fs: new FolderFs(root) };
}

t.test('nothing is done through a symlinked parent, nor a file taken for a directory', async (t) => {
  const { canary, fs } = folderBesideCanary(t);
  for (const parent of ['link', 'relative']) {
    const name = `${parent}/secret.txt`;
    await t.rejects(fs.lstat(name), { code: 'ETRAVERSES' }, `lstat ${name}`);
    await t.rejects(fs.open(name, 'r'), { code: 'ETRAVERSES' }, `read ${name}`);
    t.throws(() => fs.openSync(name, 'r'), { code: 'ETRAVERSES' }, `read ${name} at once`);
    await t.rejects(fs.open(`${parent}/new.txt`, 'wx+'), { code: 'ETRAVERSES' }, `create under ${parent}`);
    await t.rejects(fs.unlink(name), { code: 'ETRAVERSES' }, `delete ${name}`);
    await t.rejects(fs.rename('real/f.txt', `${parent}/moved.txt`), { code: 'ETRAVERSES' });
    await t.rejects(fs.symlink('/etc', `${parent}/l`), { code: 'ETRAVERSES' });
    await t.rejects(fs.chmod(name, 0o777), { code: 'ETRAVERSES' });
    await t.rejects(fs.lutimes(name, 0, 0), { code: 'ETRAVERSES' });
    t.throws(() => fs.directory(`${parent}/deep/er`, true), { code: 'ETRAVERSES' });
    t.throws(() => fs.readdirSync(parent), { code: 'ETRAVERSES' }, 'a symlink is not listed as a directory');
  }
  await t.rejects(fs.open('file/x', 'wx+'), { code: 'ENOTDIR', message: 'not a directory: file' });
  await t.rejects(fs.open('link', 'r'), { code: 'ELOOP' }, 'a symlink itself is never opened');
  t.same(readdirSync(canary), ['secret.txt'], 'the canary holds what it held, and no more');
  t.equal(readFileSync(join(canary, 'secret.txt'), 'utf8'), 'outside');
});

t.test('names must lie inside the folder', async (t) => {
  const { fs } = folderBesideCanary(t);
  for (const name of [
    '../canary/secret.txt',
    '/etc/passwd',
    'real/../../canary/secret.txt',
    'real//f.txt',
    './f',
  ])
    await t.rejects(fs.open(name, 'r'), { code: 'EINVAL' }, name);
});

t.test('parents are made one at a time, inside the one before', async (t) => {
  const { root, fs } = folderBesideCanary(t);
  fs.directory('a/b/c', true).close();
  t.ok(existsSync(join(root, 'a/b/c')));
  const fd = await fs.open('a/b/c/new.txt', 'wx+');
  await writeAt(fd, Buffer.from('pulled'), 0);
  await closeFd(fd);
  await fs.rename('a/b/c/new.txt', 'a/moved.txt');
  t.equal(readFileSync(join(root, 'a/moved.txt'), 'utf8'), 'pulled');
});

t.test('a parent swapped for a symlink while an operation is under way is not followed', async (t) => {
  const { root, canary, fs } = folderBesideCanary(t);
  mkdirSync(join(root, 'swapped'));
  // The parents are opened as the call is made; the swap happens before the file is created.
  const creating = fs.open('swapped/planted.txt', 'wx+');
  renameSync(join(root, 'swapped'), join(root, 'moved-away'));
  symlinkSync(canary, join(root, 'swapped'));
  await closeFd(await creating);
  t.notOk(existsSync(join(canary, 'planted.txt')), 'nothing made in the canary');
  t.ok(existsSync(join(root, 'moved-away/planted.txt')), 'made in the directory that was checked');
});

t.test('the folder’s own names are never written or deleted', async (t) => {
  const dir = t.testdir({ '.stignore': 'keep', '.stfolder': {}, marker: {} });
  const fs = new FolderFs(dir, 'marker');
  for (const name of ['.stignore', '.stfolder/x', '.stversions/x', 'marker/x']) {
    await t.rejects(fs.open(name, 'w'), { code: 'EINTERNAL' }, name);
    await t.rejects(fs.unlink(name), { code: 'EINTERNAL' }, name);
  }
  await t.rejects(fs.rename('.stignore', 'moved'), { code: 'EINTERNAL' });
  t.equal(readFileSync(join(dir, '.stignore'), 'utf8'), 'keep');
  t.ok(isInternal('sub/.syncthing.x.tmp'), 'a temporary name anywhere');
  t.ok(isInternal(temporaryName('sub/x')));
  t.ok(isInternal('.stversions/a/b'));
  t.ok(isInternal('q/.syncthing.b.tmp/c'), 'below a temporary name');
  t.ok(isInternal('~syncthing~x'), 'Windows’ temporary prefix too');
  const kept = `${'é'.repeat(72)}a`; // 145 bytes, as Syncthing keeps
  t.equal(temporaryName(`a/${kept}`), `a/.syncthing.${kept}.tmp`, 'a base of 145 bytes kept');
  t.match(temporaryName(`a/${'é'.repeat(73)}`), /^a\/\.syncthing\.[0-9a-f]{64}\.tmp$/, 'longer: its SHA-256');
  t.notOk(isInternal('sub/.stignore'), 'only at the root, as Syncthing’s IsInternal');
  t.notOk(isInternal('.stfolderx'));
});
