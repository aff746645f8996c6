import { chmodSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { versionerFor } from '../../../worker/versioning/for-folder.ts';
import { VersioningError } from '../../../worker/versioning/versioner.ts';
import { local, setMtime, versionedFolder } from './folder.ts';

const folder = (type: string) => ({
  id: 'f',
  path: '/nonexistent',
  markerName: '.stfolder',
  versioning: { type, params: {}, cleanupIntervalS: 3600, fsPath: '', fsType: 'basic' },
});

t.test('the configured type, none for "", an error for an unknown one', async (t) => {
  t.equal(versionerFor(folder('')), undefined);
  for (const type of ['trashcan', 'simple', 'staggered', 'external'])
    t.equal(versionerFor(folder(type))?.type, type);
  t.throws(() => versionerFor(folder('sendreceive')), {
    name: 'VersioningError',
    message: 'requested versioning type "sendreceive" does not exist',
  });
  t.throws(() => versionerFor(folder('none')), VersioningError);
});

t.test(
  'what fails after an archive succeeded is a warning, worded as an error of the versioner',
  async (t) => {
    const { root, versions, versioner, warnings } = versionedFolder(
      t,
      { type: 'simple', params: { keep: '1' } },
      { 'f.txt': 'x', '.stversions': { 'f~20200101-000000.txt': {} } },
    );
    await versioner.archive('f.txt');
    t.same(readdirSync(versions).sort(), ['f~20200101-000000.txt', 'f~20220315-101112.txt']);
    t.same(
      warnings.map((w) => [w.name, w.message]),
      [
        [
          'VersioningError',
          'simple versioner: archive: non-file "f~20200101-000000.txt" is named like a file version',
        ],
      ],
    );
    t.same(readdirSync(root).sort(), ['.stfolder', '.stversions']);
  },
);

t.test('a cleanout that fails on one file cleans the rest, then throws', async (t) => {
  // The versions' FolderFs refuses to write a folder's internal name at its root: a failure even as root.
  const { versions, versioner } = versionedFolder(
    t,
    { type: 'trashcan', params: { cleanoutDays: '1' } },
    { '.stversions': { '.stignore': 'i', 'old.txt': 'o', sub: { 'old.txt': 'o' } } },
  );
  for (const name of ['.stignore', 'old.txt', 'sub/old.txt'])
    setMtime(join(versions, name), local(2000, 1, 1));
  await t.rejects(versioner.clean(), {
    name: 'VersioningError',
    message: /^trashcan versioner: clean: removing .stignore: ".stignore" is internal/,
  });
  t.same(readdirSync(versions), ['.stignore'], 'the rest removed all the same');
});

const root = process.getuid?.() === 0;
t.test(
  'a cleanout that cannot remove everything cleans the rest, then throws',
  { skip: root && 'root reads all' },
  async (t) => {
    const { versions, versioner } = versionedFolder(
      t,
      { type: 'trashcan', params: { cleanoutDays: '1' } },
      { '.stversions': { locked: { 'old.txt': 'o' }, 'old.txt': 'o', closed: { 'x.txt': 'x' } } },
    );
    for (const name of ['locked/old.txt', 'old.txt']) setMtime(join(versions, name), local(2000, 1, 1));
    chmodSync(join(versions, 'locked'), 0o500);
    chmodSync(join(versions, 'closed'), 0o000);
    t.teardown(() => {
      chmodSync(join(versions, 'locked'), 0o755);
      chmodSync(join(versions, 'closed'), 0o755);
    });
    await t.rejects(versioner.clean(), {
      name: 'VersioningError',
      message: /^trashcan versioner: clean: reading closed: permission denied \(and 1 more\)$/,
    });
    t.same(readdirSync(versions).sort(), ['closed', 'locked'], 'old.txt removed all the same');
  },
);
