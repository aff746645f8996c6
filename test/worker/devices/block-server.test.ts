// What the block server answers a device, in process: the folder's real file, checked against the
// index as it is at each request (the server keeps records only until the index is written to).
import { createHash, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { create } from '@bufbuild/protobuf';
import t from 'tap';
import { emptyConfiguration, FOLDER_DEFAULTS, FOLDER_DEVICE } from '../../../shared/config/defaults.ts';
import { ErrorCode, RequestSchema } from '../../../worker/bep/bep_pb.ts';
import { BlockServer } from '../../../worker/devices/block-server.ts';
import type { FileRecord } from '../../../worker/index-db/file-record.ts';
import { IndexDb } from '../../../worker/index-db/index-db.ts';
import { HasherPool } from '../../../worker/scanner/hasher-pool.ts';
import { scanFolder } from '../../../worker/scanner/scan-folder.ts';

const PEER = 'PEER';

t.test(
  'a block is served while the index has the file, and refused once it records it deleted',
  async (t) => {
    const dir = t.testdir({ folder: { '.stfolder': {} } });
    const path = join(dir, 'folder');
    const content = randomBytes(200 * 1024);
    await writeFile(join(path, 'a.bin'), content);
    const db = await IndexDb.open(join(dir, 'index.sqlite'));
    const hasher = new HasherPool(1);
    t.teardown(async () => {
      await hasher.close();
      db.close();
    });
    const folder = { id: 'f', path, markerName: '.stfolder', ignorePerms: false, modTimeWindowS: 0 };
    await scanFolder({ folder, db, hasher, shortId: 7n });
    const config = emptyConfiguration();
    config.folders.push({
      ...FOLDER_DEFAULTS,
      id: 'f',
      path,
      devices: [{ ...FOLDER_DEVICE, deviceID: PEER }],
    });
    const server = new BlockServer({ db, config: () => config });
    t.teardown(() => server.close());

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
