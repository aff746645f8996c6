import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, readlink, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { temporaryName } from '../../../worker/files/folder-fs.ts';
import type { BlockRequest } from '../../../worker/bep/block-request.ts';
import { EventLog } from '../../../worker/events/event-log.ts';
import type { FileRecord } from '../../../worker/records/file-record.ts';
import { scanFolder } from '../../../worker/folders/scan-folder.ts';
import { DownloadProgress, type FileProgress } from '../../../worker/sync/download-progress.ts';
import { pullFolder } from '../../../worker/sync/pull-folder.ts';
import { recordingLogger } from '../../helpers/app.ts';
import { pullRig } from '../../helpers/pull-rig.ts';
import { receivedBlock } from '../../helpers/received-block.ts';

// The devices are played by `answer`, which serves blocks from the source folder's real file; the
// records they announce are what the real scanner made of it. What is tested is the puller itself:
// what it asks for, what it accepts, what it writes.
const FILE = 'big.bin';
const SIZE = 1024 * 1024 + 777; // 9 blocks of 128 KiB, the last one short

async function setup(t: Test, devices: string[]) {
  const dir = t.testdir({ source: { '.stfolder': {} }, target: { '.stfolder': {} } });
  const [source, target] = [join(dir, 'source'), join(dir, 'target')];
  const content = randomBytes(SIZE);
  await writeFile(join(source, FILE), content);
  const { sourceDb, db, hasher, writer } = await pullRig(t, dir);
  const folder = { id: 'f', path: source, markerName: '.stfolder', ignorePerms: false, modTimeWindowS: 0 };
  await scanFolder({ folder, db: sourceDb, hasher, shortId: 7n });
  const record = sourceDb.file('f', FILE) as FileRecord;
  for (const device of devices) db.putRemote('f', device, [record], true);
  const asked: Array<{ device: string; offset: bigint }> = [];
  const { logger, warnings } = recordingLogger();
  // What each file's progress was when its blocks were all there.
  const finished: Record<string, FileProgress> = {};
  const progress = new (class extends DownloadProgress {
    override track(folder: string, name: string, blocks: number, bytes: number) {
      const tracker = super.track(folder, name, blocks, bytes);
      return {
        ...tracker,
        done: () => {
          finished[name] = this.snapshot()[folder]?.[name] as FileProgress;
          tracker.done();
        },
      };
    }
  })();
  const pull = (answer: (device: string, block: BlockRequest) => Buffer, connected = devices) =>
    pullFolder({
      progress,
      folder: { id: 'f', path: target, ignorePerms: false },
      db,
      connected: () => new Set(connected),
      request: async (device, block) => {
        asked.push({ device, offset: block.offset });
        // As a connection receives a block (in a Response's own memory: checked and written by the
        // writer's threads).
        return receivedBlock(await answer(device, block));
      },
      writer,
      recorded: () => {},
      events: new EventLog(),
      logger,
    });
  const honest = (_device: string, block: BlockRequest) =>
    content.subarray(Number(block.offset), Number(block.offset) + block.size);
  return { target, content, record, db, pull, honest, asked, warnings, finished, progress };
}

t.test('a block with the wrong content is refused and asked of another device', async (t) => {
  const { target, content, pull, honest, asked, warnings } = await setup(t, ['HONEST', 'LIAR']);
  const result = await pull((device, block) => {
    const data = Buffer.from(honest(device, block));
    if (device === 'LIAR') data[0] = (data[0] ?? 0) ^ 0xff;
    return data;
  });
  t.same(result.problems, []);
  t.ok((await readFile(join(target, FILE))).equals(content), 'the file has the right content');
  t.ok(
    asked.some((entry) => entry.device === 'LIAR'),
    'the liar was asked',
  );
  t.match(warnings.join('\n'), /LIAR sent a block that is not the one asked for/, 'and that is logged');
});

t.test('with only a device that sends wrong content, nothing is written in place', async (t) => {
  const { target, pull, honest } = await setup(t, ['LIAR']);
  const result = await pull((device, block) => {
    const data = Buffer.from(honest(device, block));
    data[data.length - 1] = (data[data.length - 1] ?? 0) ^ 1;
    return data;
  });
  t.match(result.problems, [{ name: FILE, error: /not the one asked for/ }], 'a problem, named');
  await t.rejects(stat(join(target, FILE)), { code: 'ENOENT' }, 'no file with wrong content');
});

t.test(
  'a pull interrupted mid-file resumes from its temporary file: only the missing blocks are asked for',
  async (t) => {
    const { target, content, record, pull, honest, asked, finished, progress } = await setup(t, ['HONEST']);
    // What an interrupted pull left: the first four blocks written, the rest not (and one garbled).
    const temporary = join(target, temporaryName(FILE));
    const handle = await open(temporary, 'w+');
    await handle.write(content.subarray(0, 4 * 131072), 0, 4 * 131072, 0);
    await handle.write(Buffer.alloc(10, 1), 0, 10, 2 * 131072);
    await handle.close();
    const result = await pull(honest);
    t.same(result.problems, []);
    t.ok((await readFile(join(target, FILE))).equals(content), 'the file is whole and right');
    t.same(
      asked.map((entry) => Number(entry.offset) / 131072).sort((a, b) => a - b),
      [2, ...Array.from({ length: record.blocks.length - 4 }, (_, i) => i + 4)],
      'the garbled block and the ones never written were asked for; the three good ones were reused',
    );
    await t.rejects(stat(temporary), { code: 'ENOENT' }, 'the temporary file became the file');
    t.match(
      finished[FILE],
      { total: 9, reused: 3, pulled: 6, pulling: 0, bytesDone: SIZE, bytesTotal: SIZE },
      "DownloadProgress: the blocks by where they came from, in Syncthing's shape",
    );
    t.same(progress.snapshot(), {}, 'and nothing is in progress once the pull ended');
  },
);

t.test('a subdirectory that does not exist yet is made', async (t) => {
  const { db, record, pull, honest, target, content } = await setup(t, ['HONEST']);
  db.putRemote('f', 'HONEST', [{ ...record, name: `deep/er/${FILE}`, sequence: 2 }], false);
  await mkdir(join(target, 'deep'));
  const result = await pull(honest);
  t.same(result.problems, []);
  t.ok((await readFile(join(target, 'deep', 'er', FILE))).equals(content));
});

t.test('a block that fails ends its file only once every other block of it has ended', async (t) => {
  const { target, pull, honest } = await setup(t, ['HONEST']);
  // The first block is refused at once; the others come 50 ms later. A file closed before them would
  // leave their writes to a descriptor the next open may get: another file's.
  let pending = 0;
  const result = await pull(((device: string, block: BlockRequest) => {
    if (block.offset === 0n) throw new Error('refused');
    pending += 1;
    return new Promise<Buffer>((resolve) =>
      setTimeout(() => {
        pending -= 1;
        resolve(honest(device, block));
      }, 50),
    );
  }) as unknown as (device: string, block: BlockRequest) => Buffer);
  t.equal(pending, 0, 'no block was still under way when the pull ended');
  t.match(result.problems, [{ name: FILE, error: /refused/ }], 'the file failed, and says why');
  // (Counted by where they point: the writer's threads hold descriptors of their own.)
  const open = await Promise.all(
    (await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')),
  );
  t.same(
    open.filter((path) => path.startsWith(`${target}/`)),
    [],
    'no file of the folder left open',
  );
  await t.rejects(stat(join(target, FILE)), { code: 'ENOENT' }, 'nothing in place');
});
