import { create } from '@bufbuild/protobuf';
import t from 'tap';
import { FileInfoSchema, FileInfoType } from '../../../worker/bep/bep_pb.ts';
import { fromFileInfo, toFileInfo } from '../../../worker/bep/file-info.ts';
import type { FileRecord } from '../../../worker/records/file-record.ts';
import { consistencyProblem } from '../../helpers/syncthing-2x.ts';

const hash = Buffer.alloc(32, 7);
const record: FileRecord = {
  name: 'sub/ünï cödé.txt',
  type: 'file',
  size: 300_000,
  permissions: 0o644,
  modifiedS: 1_790_000_000,
  modifiedNs: 123_456_789,
  modifiedBy: 18402600965208236736n,
  deleted: false,
  invalid: false,
  noPermissions: false,
  version: [{ id: 18402600965208236736n, value: 1_790_000_000n }],
  sequence: 42,
  blockSize: 131072,
  blocks: [
    { offset: 0, size: 131072, hash, weakHash: 1 },
    { offset: 131072, size: 131072, hash, weakHash: 2 },
    { offset: 262144, size: 37856, hash, weakHash: 3 },
  ],
  symlinkTarget: '',
};

t.test('a record goes to a FileInfo and comes back the same, 64-bit values exact', async (t) => {
  t.same(fromFileInfo(toFileInfo(record)), record);
});

t.test("what breaks Syncthing's rules is named, never stored", async (t) => {
  const base = toFileInfo(record);
  const cases: Array<[string, Partial<typeof base>, RegExp]> = [
    ['an absolute name', { name: '/etc/passwd' }, /not relative/],
    ['a name that climbs out', { name: '../x' }, /not relative/],
    ['a name not canonical', { name: 'a//b' }, /canonical/],
    ['a dot name', { name: 'a/./b' }, /canonical/],
    ['a deleted file with blocks', { deleted: true }, /deleted file with non-empty block list/],
    ['a directory with blocks', { type: FileInfoType.DIRECTORY }, /directory with non-empty block list/],
    ['a file without blocks', { blocks: [] }, /file with empty block list/],
    ['a block size that is no power of two', { blockSize: 100_000 }, /block size 100000/],
    ['blocks that leave a gap', { blocks: [base.blocks[0]!, base.blocks[2]!] }, /do not follow each other/],
    ['blocks short of the size', { size: 400_000n }, /blocks of 300000 bytes for a file of 400000/],
    [
      'a hash of the wrong length',
      { blocks: [{ ...base.blocks[0]!, hash: Buffer.alloc(5) }] },
      /hash of 5 bytes/,
    ],
    ['an unknown type', { type: 9 as FileInfoType }, /unknown file type 9/],
    ['a size beyond 2^53', { size: 2n ** 60n }, /size .* out of range/],
  ];
  for (const [what, change, reason] of cases) {
    const info = create(FileInfoSchema, { ...base, ...change });
    const result = fromFileInfo(info);
    t.match(result, reason, what);
  }
  t.match(
    fromFileInfo(create(FileInfoSchema, { ...base, deleted: true, blocks: [], size: 0n })),
    { deleted: true },
    'a deletion',
  );
  t.match(
    fromFileInfo(create(FileInfoSchema, { ...base, name: 'caf\u0065\u0301' })),
    { name: 'caf\u0065\u0301' },
    'an NFD name is a name',
  );
});

t.test("what syncd sends passes Syncthing 2.x's checks, whatever the record holds", async (t) => {
  const kinds: Array<[string, Partial<FileRecord>]> = [
    ['a file', {}],
    ['an empty file, one empty block', { size: 0, blocks: [{ offset: 0, size: 0, hash, weakHash: 1 }] }],
    ['an ignored file without blocks', { invalid: true, blocks: [] }],
    ['a deleted file that kept its blocks', { deleted: true }],
    // As 2.x sent it and syncd pulled it: 2.x takes 128 for a directory, but 1.19 sends 0.
    ['a directory of the synthetic size', { type: 'directory', size: 128, blocks: [] }],
    ['a directory with blocks', { type: 'directory', size: 4096 }],
    ['a deleted directory', { type: 'directory', size: 0, blocks: [], deleted: true }],
    ['a symlink with a size', { type: 'symlink', size: 7, blocks: [], symlinkTarget: 'dir/ünï' }],
  ];
  for (const [what, change] of kinds) {
    const info = toFileInfo({ ...record, ...change });
    t.equal(consistencyProblem(info), undefined, what);
    if (info.type !== FileInfoType.FILE) t.equal(info.size, 0n, `${what}: size 0, as 1.19 sends it`);
  }
  const link = toFileInfo({ ...record, type: 'symlink', size: 0, blocks: [], symlinkTarget: 'dir/ünï' });
  t.same(Buffer.from(link.symlinkTarget), Buffer.from('dir/ünï'), "a target's bytes: its UTF-8");
});
