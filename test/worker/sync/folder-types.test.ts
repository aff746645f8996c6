import { readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { toFileInfo } from '../../../worker/bep/file-info.ts';
import type { FileRecord } from '../../../worker/records/file-record.ts';
import { compareVersions } from '../../../worker/records/versions.ts';
import { hashFile } from '../../../worker/scanner/hash-file.ts';
import { scanFolder } from '../../../worker/folders/scan-folder.ts';
import { indexedFolder } from '../../helpers/indexed-folder.ts';
import {
  adoptEqualVersions,
  overrideRemoteChanges,
  revertLocalChanges,
} from '../../../worker/sync/folder-types.ts';
import { folderNeed } from '../../../worker/index-db/global.ts';

// Two devices in one index: this one (short ID `me`) and a peer whose records are put as an Index
// would bring them. The files are real, scanned by the real scanner.
const me = 0x0123456789abcdefn;
const peerShort = 0x1111111111111111n;
const PEER = 'PEER';

async function setup(t: Test, receiveOnly: boolean) {
  const {
    path,
    db,
    hasher,
    folder,
    scan: scanAsSendReceive,
  } = await indexedFolder(t, {
    tree: { 'shared.txt': 'the same on both' },
    shortId: me,
  });
  // The first scan as a send-receive folder: what both devices had before the folder became this type.
  await scanAsSendReceive();
  const shared = db.file('f', 'shared.txt') as FileRecord;
  // The peer has the same version of it.
  db.putRemote('f', PEER, [{ ...shared, sequence: 1 }], true);
  const scan = () => scanFolder({ folder: { ...folder, receiveOnly }, db, hasher, shortId: me });
  return { path, db, scan, shared };
}

t.test(
  'receive-only: a change here is kept apart, offered without a version, and a revert gives it up',
  async (t) => {
    const { path, db, scan, shared } = await setup(t, true);
    await writeFile(join(path, 'shared.txt'), 'changed here');
    await writeFile(join(path, 'added.txt'), 'only here');
    await scan();
    const changed = db.file('f', 'shared.txt') as FileRecord;
    t.equal(changed.receiveOnlyChanged, true, 'the change is marked as kept here');
    t.equal(compareVersions(changed.version, shared.version), 'greater', 'with a version bumped as usual');
    t.same(folderNeed(db, 'f').needed, [], 'the peer version is not needed: ours is newer, only not offered');
    const offered = toFileInfo(changed);
    t.equal(offered.invalid, true, 'offered as invalid');
    t.same(offered.version?.counters, [], 'and without a version, so that it never becomes global');
    t.match(db.counts('f', undefined, true), { files: 2 }, 'both changes counted apart');
    t.match(db.counts('f'), { files: 0 }, 'and not as local files');

    const { records, problems } = await revertLocalChanges(db, { id: 'f', path, ignorePerms: false }, me);
    t.same(problems, []);
    db.update('f', records);
    const reverted = db.file('f', 'shared.txt') as FileRecord;
    t.equal(reverted.receiveOnlyChanged, undefined, 'a revert takes the mark off');
    t.same(reverted.version, [], 'and the version: the peer version is newer than an empty one');
    t.same(
      folderNeed(db, 'f').needed.map((item) => item.name),
      ['shared.txt'],
      'so that the next pull brings it back (an empty version is older, not in conflict)',
    );
    await t.rejects(readFile(join(path, 'added.txt')), { code: 'ENOENT' }, 'a local addition is deleted');
    t.match(db.file('f', 'added.txt'), { deleted: true, version: [] });
  },
);

t.test('receive-only: a change that makes a file what the others have takes their version', async (t) => {
  const { path, db, scan, shared } = await setup(t, true);
  // The peer changed the file; the same content, with the same time, appears here by other means.
  const file = join(path, 'shared.txt');
  await writeFile(file, 'the peer version');
  await utimes(file, 1_700_000_000, 1_700_000_000);
  const blocks = hashFile(file, 16, shared.blockSize);
  const peerVersion = [...shared.version, { id: peerShort, value: 5n }];
  db.putRemote(
    'f',
    PEER,
    [
      {
        ...shared,
        size: 16,
        blocks,
        modifiedS: 1_700_000_000,
        modifiedNs: 0,
        version: peerVersion,
        sequence: 2,
      },
    ],
    false,
  );
  await scan();
  const taken = db.file('f', 'shared.txt') as FileRecord;
  t.same(taken.version, peerVersion, "the peer's version is taken");
  t.equal(taken.receiveOnlyChanged, undefined, 'nothing kept apart');
  t.same(folderNeed(db, 'f').needed, [], 'nothing needed');
});

t.test("send-only: an override makes this device's versions newer than the peer's changes", async (t) => {
  const { db, shared } = await setup(t, false);
  const peerVersion = [...shared.version, { id: peerShort, value: 9n }];
  db.putRemote(
    'f',
    PEER,
    [
      { ...shared, version: peerVersion, size: 3, sequence: 2, modifiedBy: peerShort },
      {
        ...shared,
        name: 'theirs.txt',
        version: [{ id: peerShort, value: 9n }],
        sequence: 3,
        modifiedBy: peerShort,
      },
    ],
    false,
  );
  t.same(
    folderNeed(db, 'f').needed.map((item) => item.name),
    ['shared.txt', 'theirs.txt'],
    'before: the peer changes are needed',
  );
  const { records } = overrideRemoteChanges(db, 'f', me);
  db.update('f', records);
  t.same(folderNeed(db, 'f').needed, [], 'after: nothing is');
  const ours = db.file('f', 'shared.txt') as FileRecord;
  t.equal(compareVersions(ours.version, peerVersion), 'greater', 'our file, with a version above theirs');
  t.equal(ours.size, shared.size, 'as it is here');
  t.match(db.file('f', 'theirs.txt'), { deleted: true }, 'what only they have becomes a deletion');
});

t.test('send-only: a peer version of what this device has the same already is taken, no other', async (t) => {
  const { db, shared } = await setup(t, false);
  const same = [...shared.version, { id: peerShort, value: 3n }];
  db.putRemote(
    'f',
    PEER,
    [
      // The same content and time under a newer version (the peer touched nothing but the version).
      { ...shared, version: same, sequence: 2, modifiedBy: peerShort },
      // Another file, different: not taken.
      {
        ...shared,
        name: 'other.txt',
        version: [{ id: peerShort, value: 4n }],
        sequence: 3,
        modifiedBy: peerShort,
      },
    ],
    false,
  );
  const { records } = adoptEqualVersions(db, { id: 'f', ignorePerms: false, modTimeWindowS: 0 });
  t.same(
    records.map((record) => record.name),
    ['shared.txt'],
    'only the equal one',
  );
  db.update('f', records);
  t.same(db.file('f', 'shared.txt')?.version, same, 'with the peer version');
  t.same(
    folderNeed(db, 'f').needed.map((item) => item.name),
    ['other.txt'],
    'what differs stays needed',
  );
});
