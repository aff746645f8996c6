import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import type { FileRecord } from '../../../worker/records/file-record.ts';
import { shortIdString } from '../../../shared/device-id.ts';
import { bumpVersion, versionStrings } from '../../../worker/records/file-record.ts';
import { IndexDb, MIGRATIONS, SCHEMA_VERSION } from '../../../worker/index-db/index-db.ts';

const record = (name: string, extra: Partial<FileRecord> = {}): Omit<FileRecord, 'sequence'> => ({
  name,
  type: 'file',
  size: 5,
  permissions: 0o644,
  modifiedS: 1_700_000_000,
  modifiedNs: 123,
  modifiedBy: 0xfedcba9876543210n,
  deleted: false,
  invalid: false,
  noPermissions: false,
  version: [{ id: 0xfedcba9876543210n, value: 1_700_000_001n }],
  blockSize: 131072,
  blocks: [{ offset: 0, size: 5, hash: Buffer.alloc(32, 9), weakHash: 0xffffffff }],
  symlinkTarget: '',
  ...extra,
});

t.test('records get the next sequence numbers, survive a reopen, and 64-bit values stay exact', async (t) => {
  const path = join(t.testdir(), 'index.sqlite');
  const db = await IndexDb.open(path);
  const { indexId } = db.folder('f');
  t.same(
    db.update('f', [record('a'), record('b')]).map((r) => r.sequence),
    [1, 2],
  );
  t.same(
    db.update('f', [record('a', { size: 7 })]).map((r) => r.sequence),
    [3],
  );
  db.close();
  const again = await IndexDb.open(path);
  t.teardown(() => again.close());
  t.same(again.folder('f'), { indexId, sequence: 3 }, 'the same index ID and sequence');
  const a = again.file('f', 'a');
  t.match(a, { size: 7, sequence: 3, modifiedBy: 0xfedcba9876543210n, modifiedNs: 123 });
  t.same(a?.version, [{ id: 0xfedcba9876543210n, value: 1_700_000_001n }]);
  t.same(a?.blocks, record('a').blocks);
  t.same(
    again.files('f').map((r) => r.name),
    ['a', 'b'],
  );
  t.same(again.counts('f'), { files: 2, directories: 0, symlinks: 0, deleted: 0, bytes: 12 });
  t.same(
    again.summary('f', 'a'),
    {
      type: 'file',
      size: 7,
      permissions: 0o644,
      modifiedS: 1_700_000_000,
      modifiedNs: 123,
      deleted: false,
      invalid: false,
      blockSize: 131072,
      symlinkTarget: '',
    },
    'a record in brief',
  );
  t.equal(again.summary('f', 'a', 'ANOTHER'), undefined, "another device's, which it does not have");
  t.equal(again.summary('f', 'c'), undefined, 'none of a name not there');
  again.drop('f');
  t.same(again.files('f'), []);
  t.not(again.folder('f').indexId, indexId, 'a folder indexed anew gets a new index ID');
});

t.test('a failing change writes nothing', async (t) => {
  const db = await IndexDb.open(join(t.testdir(), 'index.sqlite'));
  t.teardown(() => db.close());
  db.update('f', [record('a')]);
  t.throws(() => db.update('f', [record('b'), { ...record('c'), blocks: null as never }]));
  t.same(
    db.files('f').map((r) => r.name),
    ['a'],
  );
  t.equal(db.folder('f').sequence, 1);
});

t.test('a file that is not our index is reported and left untouched', async (t) => {
  const dir = t.testdir();
  const text = join(dir, 'text.sqlite');
  await writeFile(text, 'hello, this is not a database at all');
  await t.rejects(IndexDb.open(text), { name: 'IndexDbError', message: /is not an SQLite database/ });
  t.equal(await readFile(text, 'utf8'), 'hello, this is not a database at all');

  const foreign = join(dir, 'foreign.sqlite');
  const other = new Database(foreign);
  other.exec('CREATE TABLE notes (text TEXT)');
  other.close();
  const before = await readFile(foreign);
  await t.rejects(IndexDb.open(foreign), { name: 'IndexDbError', message: /of another program/ });
  t.same(await readFile(foreign), before);

  const newer = join(dir, 'newer.sqlite');
  (await IndexDb.open(newer)).close();
  const raw = new Database(newer);
  raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
  raw.close();
  await t.rejects(IndexDb.open(newer), { name: 'IndexDbError', message: /newer than this syncd's/ });

  const corrupt = join(dir, 'corrupt.sqlite');
  (await IndexDb.open(corrupt)).close();
  const bytes = await readFile(corrupt);
  bytes.fill(0xee, 100, 4096);
  await writeFile(corrupt, bytes);
  await t.rejects(IndexDb.open(corrupt), { name: 'IndexDbError' });
});

t.test('version vectors: Syncthing’s counter rule and its REST spelling', async (t) => {
  const me = 0x1000000000000000n;
  const other = 0x0100000000000000n;
  t.same(bumpVersion([], me, 100n), [{ id: me, value: 100n }]);
  t.same(
    bumpVersion([{ id: me, value: 500n }], me, 100n),
    [{ id: me, value: 501n }],
    'old + 1 when later than now',
  );
  t.same(
    bumpVersion([{ id: me, value: 5n }], other, 100n),
    [
      { id: other, value: 100n },
      { id: me, value: 5n },
    ],
    'sorted by ID',
  );
  t.same(
    bumpVersion([{ id: me, value: 2n ** 64n - 1n }], me, 100n),
    [{ id: me, value: 100n }],
    'a counter at the top of its range wraps to the time, as Go’s uint64 does',
  );
  t.equal(shortIdString(0x1afc7fa2cc48d476n), 'DL6H7IW', 'as Syncthing writes the short ID of DL6H7IW-…');
  t.same(versionStrings([{ id: 0x1afc7fa2cc48d476n, value: 7n }]), ['DL6H7IW:7']);
});

t.test("a device's index replaced or reset names what changed, not the whole folder", async (t) => {
  const db = await IndexDb.open(join(t.testdir(), 'index.sqlite'));
  t.teardown(() => db.close());
  db.update('f', [record('mine')]);
  const remote = (name: string) => ({ ...record(name), sequence: 1 });
  let since = db.generation;
  db.resetRemote('f', 'NEW', 5n);
  t.same(db.changedSince(since, 'f'), new Set(), 'a device new to the folder changes nothing');
  since = db.generation;
  db.putRemote('f', 'PEER', [remote('a'), remote('b')], true);
  t.same(db.changedSince(since, 'f'), new Set(['a', 'b']), 'its first index: what it sent');
  since = db.generation;
  db.putRemote('f', 'PEER', [remote('b'), remote('c')], true);
  t.same(db.changedSince(since, 'f'), new Set(['a', 'b', 'c']), 'replaced: what it had and what it has');
  since = db.generation;
  db.resetRemote('f', 'PEER', 6n);
  t.same(db.changedSince(since, 'f'), new Set(['b', 'c']), 'reset: what it had');
  since = db.generation;
  const many = Array.from({ length: 10_001 }, (_, i) => remote(`m${i}`));
  db.putRemote('f', 'PEER', many, true);
  t.equal(db.changedSince(since, 'f'), undefined, 'past 10,000 names: the whole folder');
});

t.test("this device's records have a generation of their own, which other devices' leave", async (t) => {
  const db = await IndexDb.open(join(t.testdir(), 'index.sqlite'));
  t.teardown(() => db.close());
  const local = db.localGeneration;
  db.putRemote('f', 'PEER', [{ ...record('a'), sequence: 1 }], true);
  db.putRemote('f', 'PEER', [{ ...record('b'), sequence: 2 }], false);
  db.resetRemote('f', 'PEER', 7n);
  t.equal(db.localGeneration, local, "another device's index, its updates and its reset");
  t.ok(db.generation > local, 'change the generation of the whole index');
  for (const [what, write] of [
    ['a scan', () => db.update('f', [record('mine')])],
    ['a forgotten change', () => db.forget('f', ['mine'])],
    ['a folder dropped', () => db.drop('f')],
  ] as const) {
    const before = db.localGeneration;
    write();
    t.ok(db.localGeneration > before, `${what} changes it`);
  }
});

t.test('an index of schema 7 (IDs and versions as text) is migrated with every value exact', async (t) => {
  const path = join(t.testdir(), 'index.sqlite');
  const raw = new Database(path);
  for (const statements of MIGRATIONS.slice(0, 7)) for (const statement of statements) raw.exec(statement);
  raw.pragma('application_id = 0x73796e63');
  raw.pragma('user_version = 7');
  raw.prepare("INSERT INTO folders VALUES ('f', '43981', 1)").run();
  raw
    .prepare(
      `INSERT INTO files VALUES ('f', '', 'a', 0, 5, 420, 1700000000, 123, '18364758544493064720', 0, 0, 0,
       '[["18364758544493064720","1700000001"],["1","2"]]', 1, 131072, ?, '', 8)`,
    )
    .run(Buffer.alloc(40, 1));
  raw.close();
  const db = await IndexDb.open(path);
  t.teardown(() => db.close());
  const migrated = db.file('f', 'a');
  t.equal(migrated?.modifiedBy, 0xfedcba9876543210n);
  t.same(migrated?.version, [
    { id: 0xfedcba9876543210n, value: 1_700_000_001n },
    { id: 1n, value: 2n },
  ]);
  t.equal(migrated?.receiveOnlyChanged, true);
  t.same(db.counts('f', '', true), { files: 1, directories: 0, symlinks: 0, deleted: 0, bytes: 5 });
  t.equal(migrated?.blocks.length, 1);
  t.same(
    db.update('f', [record('b')]).map((r) => r.sequence),
    [2],
    'the sequence goes on from where it was',
  );
});

t.test('counts follow every kind of write, as a count of every record finds them', async (t) => {
  const db = await IndexDb.open(join(t.testdir(), 'index.sqlite'));
  t.teardown(() => db.close());
  const recount = (folder: string, device: string) => {
    const counts = { files: 0, directories: 0, symlinks: 0, deleted: 0, bytes: 0 };
    for (const { versions } of db.allVersions(folder)) {
      const own = versions.find((entry) => entry.device === device)?.record;
      if (!own || own.invalid || own.receiveOnlyChanged) continue;
      if (own.deleted) counts.deleted += 1;
      else if (own.type === 'directory') counts.directories += 1;
      else if (own.type === 'symlink') counts.symlinks += 1;
      else {
        counts.files += 1;
        counts.bytes += own.size;
      }
    }
    return counts;
  };
  const device = 'REMOTE';
  const check = (what: string) => {
    for (const folder of ['f', 'g']) {
      for (const who of ['', device])
        t.same(db.counts(folder, who), recount(folder, who), `${what}: ${folder} ${who}`);
    }
  };
  db.update('f', [
    record('a'),
    record('b', { size: 9 }),
    record('d', { type: 'directory', size: 0, blocks: [] }),
  ]);
  db.update('g', [record('a', { size: 3 })]);
  check('added');
  db.update('f', [record('a', { size: 11 }), record('b', { deleted: true, size: 0, blocks: [] })]);
  check('replaced, and deleted');
  db.update('f', [record('d', { invalid: true })]);
  check('made invalid');
  db.putRemote(
    'f',
    device,
    [
      { ...record('a'), sequence: 1 },
      { ...record('x', { size: 4 }), sequence: 2 },
    ],
    false,
  );
  check('another device');
  db.putRemote('f', device, [{ ...record('y', { size: 6 }), sequence: 1 }], true);
  check("another device's index replaced");
  db.forget('f', ['a']);
  check('forgotten');
  db.resetRemote('f', device, 7n);
  check("another device's index dropped");
  db.drop('g');
  check('a folder removed');
});
