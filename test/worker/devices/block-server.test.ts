// What the block server answers a device, in process: the folder's real file, checked against the
// index as it is at each request (the server keeps records only until its records are written to).
import { createHash, randomBytes } from 'node:crypto';
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { create } from '@bufbuild/protobuf';
import t, { type Test } from 'tap';
import { emptyConfiguration, FOLDER_DEFAULTS, FOLDER_DEVICE } from '../../../shared/config/defaults.ts';
import { ErrorCode, RequestSchema } from '../../../worker/bep/bep_pb.ts';
import { BlockServer } from '../../../worker/devices/block-server.ts';
import { SlowReads } from '../../../worker/devices/slow-reads.ts';
import type { FileRecord } from '../../../worker/records/file-record.ts';
import { indexedFolder } from '../../helpers/indexed-folder.ts';

const PEER = 'PEER';

/** A folder of `files`, scanned into an index, and a block server for it, shared with PEER. */
async function servedFolder(
  t: Test,
  files: Record<string, Buffer>,
  slowReads?: SlowReads,
  recheck?: (folder: string, name: string) => void,
) {
  const { path, db, scan } = await indexedFolder(t, { shortId: 7n });
  for (const [name, content] of Object.entries(files)) await writeFile(join(path, name), content);
  await scan();
  const config = emptyConfiguration();
  config.folders.push({ ...FOLDER_DEFAULTS, id: 'f', path, devices: [{ ...FOLDER_DEVICE, deviceID: PEER }] });
  const server = new BlockServer({ db, config: () => config, slowReads, recheck });
  t.teardown(() => server.close());
  return { path, db, server };
}

t.test(
  'a block is served while the index has the file, and refused once it records it deleted',
  async (t) => {
    const content = randomBytes(200 * 1024);
    const { db, server } = await servedFolder(t, { 'a.bin': content });

    const record = db.file('f', 'a.bin') as FileRecord;
    const block = record.blocks[1] as FileRecord['blocks'][number];
    const ask = (id: number) =>
      server.answer(
        PEER,
        create(RequestSchema, {
          id,
          folder: 'f',
          name: 'a.bin',
          offset: BigInt(block.offset),
          size: block.size,
          hash: block.hash,
        }),
      );
    for (const id of [1, 2]) {
      const answer = await ask(id);
      t.equal(answer.code, ErrorCode.NO_ERROR, `request ${id} answered`);
      t.equal(answer.id, id);
      t.equal(
        createHash('sha256').update(answer.data).digest('hex'),
        createHash('sha256')
          .update(content.subarray(block.offset, block.offset + block.size))
          .digest('hex'),
        `request ${id}: the block's bytes`,
      );
    }
    // The file is still on disk: only the index says it is gone, and the server goes by the index.
    db.update('f', [{ ...record, deleted: true, size: 0, blocks: [], blockSize: 0 }]);
    t.equal((await ask(3)).code, ErrorCode.NO_SUCH_FILE, 'refused once the index has it deleted');

    const other = await server.answer(
      'SOMEONE-ELSE',
      create(RequestSchema, { id: 4, folder: 'f', name: 'a.bin', offset: 0n, size: block.size }),
    );
    t.equal(other.code, ErrorCode.GENERIC, 'a device the folder is not shared with gets nothing');
  },
);

// Blocks are read at once on the worker's thread, unless reads were slow (a disk, not the page
// cache): then through libuv's threads for a while. Either way, the same answers.
for (const [how, slowReads] of [
  ['read at once', undefined],
  ['through libuv after slow reads', new SlowReads({ limitMs: -1, count: 1 })],
] as const) {
  t.test(`small files, ${how}: served whole, and only as they were scanned`, async (t) => {
    const contents = {
      'small.txt': randomBytes(3000),
      'changed.txt': randomBytes(5000),
      'gone.txt': randomBytes(10),
      'pulled.txt': randomBytes(2000),
      'large.bin': randomBytes(300 * 1024),
    };
    const { path, db, server } = await servedFolder(t, contents, slowReads);
    await writeFile(join(path, 'changed.txt'), randomBytes(5000));
    await rm(join(path, 'gone.txt'));
    await rename(join(path, 'pulled.txt'), join(path, '.syncthing.pulled.txt.tmp'));
    let id = 0;
    const ask = (name: string, fromTemporary = false, index = 0) => {
      const block = (db.file('f', name) as FileRecord).blocks[index] as FileRecord['blocks'][number];
      const offset = BigInt(block.offset);
      const request = { id: ++id, folder: 'f', name, offset, size: block.size, fromTemporary };
      return server.answer(
        PEER,
        create(RequestSchema, { ...request, hash: block.hash, weakHash: block.weakHash }),
      );
    };
    for (const round of [1, 2]) {
      const small = await ask('small.txt');
      t.equal(small.code, ErrorCode.NO_ERROR, `round ${round}: a small file is served`);
      t.ok(Buffer.from(small.data).equals(contents['small.txt']), `round ${round}: all of it`);
      t.equal((await ask('changed.txt')).code, ErrorCode.NO_SUCH_FILE, `round ${round}: not a changed file`);
      t.equal((await ask('gone.txt')).code, ErrorCode.NO_SUCH_FILE, `round ${round}: not a file gone`);
      const large = await ask('large.bin', false, 1);
      t.equal(large.code, ErrorCode.NO_ERROR, `round ${round}: a large file's block`);
      t.ok(
        Buffer.from(large.data).equals(contents['large.bin'].subarray(128 * 1024, 256 * 1024)),
        `round ${round}: its 128 KiB`,
      );
    }
    // A pull under way has it under its temporary name: served from there when asked so.
    t.equal((await ask('pulled.txt')).code, ErrorCode.NO_SUCH_FILE, 'not where it was');
    const temporary = await ask('pulled.txt', true);
    t.equal(temporary.code, ErrorCode.NO_ERROR, 'from the temporary file, when asked');
    t.ok(Buffer.from(temporary.data).equals(contents['pulled.txt']));
  });
}

t.test(
  'a block read otherwise than the index has it gets its file rechecked; another version does not',
  async (t) => {
    const content = randomBytes(200 * 1024);
    const rechecked: string[] = [];
    const { path, db, server } = await servedFolder(t, { 'a.bin': content }, undefined, (folder, name) =>
      rechecked.push(`${folder}/${name}`),
    );
    const block = (db.file('f', 'a.bin') as FileRecord).blocks[0] as FileRecord['blocks'][number];
    const ask = (hash: Uint8Array) =>
      server.answer(
        PEER,
        create(RequestSchema, { id: 1, folder: 'f', name: 'a.bin', offset: 0n, size: block.size, hash }),
      );
    t.equal((await ask(Buffer.alloc(32, 1))).code, ErrorCode.NO_SUCH_FILE, 'another version: refused');
    t.same(rechecked, [], 'and nothing rechecked: the device asks for what is not ours');
    // The same size, and no scan since: only the bytes say the file changed.
    const changed = Buffer.from(content);
    changed[10] = (changed[10] as number) ^ 0xff;
    await writeFile(join(path, 'a.bin'), changed);
    t.equal((await ask(block.hash)).code, ErrorCode.NO_SUCH_FILE, 'our version, changed on disk: refused');
    t.same(rechecked, ['f/a.bin'], 'and the file rechecked');
  },
);

t.test('a folder configured as ~/NAME is served from the home directory, as it is scanned', async (t) => {
  const content = randomBytes(50 * 1024);
  const { path, db } = await servedFolder(t, { 'a.bin': content });
  // The same folder, named from a home directory that is its parent.
  const home = join(path, '..');
  const saved = process.env.HOME;
  process.env.HOME = home;
  t.teardown(() => {
    if (saved === undefined) delete process.env.HOME;
    else process.env.HOME = saved;
  });
  const config = emptyConfiguration();
  config.folders.push({
    ...FOLDER_DEFAULTS,
    id: 'f',
    path: `~/${path.slice(home.length + 1)}`,
    devices: [{ ...FOLDER_DEVICE, deviceID: PEER }],
  });
  const server = new BlockServer({ db, config: () => config });
  t.teardown(() => server.close());
  const block = (db.file('f', 'a.bin') as FileRecord).blocks[0] as FileRecord['blocks'][number];
  const answer = await server.answer(
    PEER,
    create(RequestSchema, {
      id: 1,
      folder: 'f',
      name: 'a.bin',
      offset: 0n,
      size: block.size,
      hash: block.hash,
    }),
  );
  t.equal(answer.code, ErrorCode.NO_ERROR, `${config.folders[0]?.path} answered`);
  t.same(Buffer.from(answer.data), content);
});
