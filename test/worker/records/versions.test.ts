import t from 'tap';
import type { FileRecord } from '../../../worker/records/file-record.ts';
import { compareVersions, globalVersion, winsConflict } from '../../../worker/records/versions.ts';

const v = (...pairs: Array<[number, number]>) =>
  pairs.map(([id, value]) => ({ id: BigInt(id), value: BigInt(value) }));
const file = (over: Partial<FileRecord>): FileRecord => ({
  name: 'f',
  type: 'file',
  size: 1,
  permissions: 0o644,
  modifiedS: 100,
  modifiedNs: 0,
  modifiedBy: 1n,
  deleted: false,
  invalid: false,
  noPermissions: false,
  version: v([1, 1]),
  sequence: 1,
  blockSize: 131072,
  blocks: [],
  symlinkTarget: '',
  ...over,
});

t.test("version vectors ordered as Syncthing's Compare orders them", async (t) => {
  t.equal(compareVersions(v([1, 1]), v([1, 1])), 'equal');
  t.equal(compareVersions(v([1, 2]), v([1, 1])), 'greater');
  t.equal(compareVersions(v([1, 1]), v([1, 2])), 'lesser');
  t.equal(compareVersions(v([1, 1], [2, 1]), v([1, 1])), 'greater', 'a counter the other lacks');
  t.equal(compareVersions(v([1, 1]), v([1, 1], [2, 0])), 'equal', 'a missing counter is zero');
  // Concurrent: the direction is where the walk over the sorted IDs first finds the other side ahead.
  t.equal(compareVersions(v([1, 2]), v([1, 1], [2, 1])), 'concurrent-greater');
  t.equal(compareVersions(v([1, 1], [2, 1]), v([1, 2])), 'concurrent-lesser');
  // 64-bit short IDs, beyond 2^53, compare exactly.
  const big = 18402600965208236736n;
  t.equal(compareVersions([{ id: big, value: 2n }], [{ id: big, value: 1n }]), 'greater');
});

t.test("conflicts settled by Syncthing's rule, the same way from either side", async (t) => {
  const a = file({ version: v([1, 2]), modifiedS: 200 });
  const b = file({ version: v([1, 1], [2, 1]), modifiedS: 100 });
  t.ok(winsConflict(a, b), 'the newer modification wins');
  t.notOk(winsConflict(b, a));
  t.ok(
    winsConflict(
      file({ deleted: false, version: v([1, 2]) }),
      file({ deleted: true, modifiedS: 999, version: v([2, 2]) }),
    ),
    'a change beats a deletion',
  );
  t.ok(
    winsConflict(file({ version: v([1, 2]) }), file({ invalid: true, modifiedS: 999, version: v([2, 2]) })),
    'valid beats invalid',
  );
  const x = file({ version: v([1, 1], [2, 1]) });
  const y = file({ version: v([1, 2]) });
  t.not(winsConflict(x, y), winsConflict(y, x), 'a tie has exactly one winner');
  const settled = globalVersion([
    { device: 'A', record: a },
    { device: 'B', record: b },
    { device: 'C', record: file({ version: v([1, 2]), modifiedS: 200 }) },
  ]);
  t.same([settled?.global.device, settled?.holders], ['A', ['A', 'C']]);
  t.equal(
    globalVersion([
      { device: 'A', record: file({ invalid: true, version: v([1, 9]) }) },
      { device: 'B', record: b },
    ])?.global.device,
    'B',
    'an invalid record is global only when all are',
  );
});
