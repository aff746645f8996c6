import { join } from 'node:path';
import t from 'tap';
import type { FileRecord } from '../../../worker/records/file-record.ts';
import { IndexDb } from '../../../worker/index-db/index-db.ts';
import { folderNeed } from '../../../worker/index-db/global.ts';

const record = (name: string, id: bigint, value: bigint, over: Partial<FileRecord> = {}): FileRecord => ({
  name,
  type: 'file',
  size: Number(value) * 10,
  permissions: 0o644,
  modifiedS: 1_700_000_000,
  modifiedNs: 0,
  modifiedBy: id,
  deleted: false,
  invalid: false,
  noPermissions: false,
  version: [{ id, value }],
  sequence: Number(value),
  blockSize: 131072,
  blocks: [],
  symlinkTarget: '',
  ...over,
});

t.test(
  'a need kept up to date name by name is the need computed whole, after every kind of write',
  async (t) => {
    const dir = t.testdir();
    const db = await IndexDb.open(join(dir, 'index.sqlite'));
    t.teardown(() => db.close());
    // Each device's need as kept by `db`, and as computed whole by another connection to its file.
    const compare = (fresh: IndexDb, what: string) => {
      for (const device of ['', 'PEER']) {
        const kept = folderNeed(db, 'f', device);
        const whole = folderNeed(fresh, 'f', device);
        t.same(
          { ...kept, needed: kept.needed.map((item) => item.name) },
          { ...whole, needed: whole.needed.map((item) => item.name) },
          `${what} (${device || 'this device'})`,
        );
      }
    };
    const same = async (what: string) => {
      // A new connection to the same file: its need is computed whole, from nothing.
      const fresh = await IndexDb.open(join(dir, 'index.sqlite'));
      try {
        compare(fresh, what);
      } finally {
        fresh.close();
      }
    };
    let value = 1n;
    const names = Array.from({ length: 30 }, (_, i) => `n${i % 10}/${i}`);
    db.update(
      'f',
      names.slice(0, 20).map((name) => record(name, 1n, value)),
    );
    folderNeed(db, 'f');
    folderNeed(db, 'f', 'PEER');
    await same('local files only');
    db.putRemote(
      'f',
      'PEER',
      names.slice(10).map((name) => record(name, 2n, ++value)),
      false,
    );
    await same('a remote index');
    db.update('f', [record('n1/1', 1n, ++value, { deleted: true, size: 0 })]);
    db.putRemote('f', 'PEER', [record('n2/12', 2n, ++value, { invalid: true })], false);
    await same('a deletion and an invalid record');
    db.forget('f', ['n3/3']);
    db.update('f', [record('n4/14', 1n, ++value, { receiveOnlyChanged: true })]);
    await same('a record forgotten, a change kept apart');
    db.putRemote('f', 'PEER', [record('other', 2n, ++value)], true);
    await same('a remote index replaced whole');
    db.resetRemote('f', 'PEER', 7n);
    await same('a remote index reset');
    for (let i = 0; i < 300; i++) db.update('g', [record('elsewhere', 1n, ++value)]);
    db.update('f', [record('n5/5', 1n, ++value)]);
    await same('past the journal: computed whole again');

    // Asked, written and asked again in one turn of the event loop, where the records read for the
    // first ask are still shared: the second sees the write.
    const fresh = await IndexDb.open(join(dir, 'index.sqlite'));
    t.teardown(() => fresh.close());
    folderNeed(db, 'f');
    db.putRemote('f', 'PEER', [record('late', 2n, ++value)], false);
    folderNeed(db, 'f', 'PEER');
    db.putRemote('f', 'PEER', [record('late', 2n, ++value, { deleted: true, size: 0 })], false);
    compare(fresh, 'a write between two asks in one turn');
  },
);

t.test('the needed items are listed when asked for, and only from the need they belong to', async (t) => {
  const db = await IndexDb.open(join(t.testdir(), 'index.sqlite'));
  t.teardown(() => db.close());
  db.putRemote('f', 'PEER', [record('b', 2n, 1n), record('a', 2n, 2n)], false);
  const first = folderNeed(db, 'f');
  t.same(first.need.files, 2, 'the tallies at once');
  t.same(
    first.needed.map((item) => item.name),
    ['a', 'b'],
    'the items, by name, when asked for',
  );
  const second = folderNeed(db, 'f');
  t.equal(second, first, 'nothing written: the same answer');
  const stale = folderNeed(db, 'f');
  db.putRemote('f', 'PEER', [record('c', 2n, 3n)], false);
  const third = folderNeed(db, 'f');
  t.same(
    third.needed.map((item) => item.name),
    ['a', 'b', 'c'],
    'after a write: the new items',
  );
  t.same(
    stale.needed.map((item) => item.name),
    ['a', 'b'],
    'an answer whose items were listed keeps them',
  );
  db.putRemote('f', 'PEER', [record('d', 2n, 4n)], false);
  const unlisted = folderNeed(db, 'f');
  db.putRemote('f', 'PEER', [record('e', 2n, 5n)], false);
  folderNeed(db, 'f');
  t.throws(
    () => unlisted.needed,
    /after the index changed/,
    'one never listed cannot be listed from a later index',
  );
});
