import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { closeFd, openFd } from '../../../worker/files/fd.ts';
import { HASHING_NICENESS } from '../../../worker/scanner/hash-thread.ts';
import { BlockWriter } from '../../../worker/sync/block-writer.ts';
import { receivedBlock } from '../../helpers/received-block.ts';

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest();

async function setup(t: Test, threads?: number) {
  const dir = t.testdir();
  const path = join(dir, 'file');
  const fd = await openFd(path, 'w+');
  const writer = new BlockWriter(threads);
  t.teardown(async () => {
    await writer.close();
    await closeFd(fd).catch(() => {});
  });
  return { path, fd, writer };
}

t.test('blocks received and blocks from elsewhere are checked and written where they go', async (t) => {
  const { path, fd, writer } = await setup(t);
  const blocks = Array.from({ length: 6 }, () => randomBytes(100 * 1024));
  // Out of order, at once, half of them received (moved to a thread) and half not.
  const written = await Promise.all(
    [3, 0, 5, 1, 4, 2].map((index) => {
      const block = blocks[index] as Buffer;
      const data = index % 2 === 0 ? receivedBlock(block) : Buffer.from(block);
      return writer.write(fd, data, index * block.length, sha256(block));
    }),
  );
  t.same(written, [true, true, true, true, true, true], 'every block written');
  t.ok((await readFile(path)).equals(Buffer.concat(blocks)), 'the file is the blocks in their places');
});

t.test('a block that is not the one asked for is refused, and nothing of it is written', async (t) => {
  const { path, fd, writer } = await setup(t);
  const good = randomBytes(128 * 1024);
  const bad = Buffer.from(good);
  bad[77] = (bad[77] ?? 0) ^ 1;
  t.equal(await writer.write(fd, receivedBlock(bad), 0, sha256(good)), false, 'refused in a thread');
  t.equal(await writer.write(fd, Buffer.from(bad), 0, sha256(good)), false, 'refused here');
  t.equal((await readFile(path)).length, 0, 'nothing written');
  t.equal(await writer.write(fd, receivedBlock(good), 0, sha256(good)), true, 'the right one is written');
  t.ok((await readFile(path)).equals(good));
});

t.test('a write that fails rejects with the system error', async (t) => {
  const { fd, writer } = await setup(t);
  const readOnly = await openFd(join(t.testdirName, 'file'), 'r');
  t.teardown(() => closeFd(readOnly));
  const block = randomBytes(64 * 1024);
  await t.rejects(writer.write(readOnly, receivedBlock(block), 0, sha256(block)), { code: 'EBADF' });
  t.equal(await writer.write(fd, receivedBlock(block), 0, sha256(block)), true, 'the thread still writes');
});

t.test(
  "the writer's threads keep the worker's priority (they are part of the pull)",
  { skip: process.platform === 'linux' ? false : 'thread priorities are set on Linux only' },
  async (t) => {
    const before = new Set(await readdir('/proc/self/task'));
    const ownStat = await readFile('/proc/self/stat', 'utf8');
    const own = Number(ownStat.slice(ownStat.lastIndexOf(')') + 2).split(' ')[16]);
    const { fd, writer } = await setup(t, 1);
    const block = randomBytes(64 * 1024);
    t.equal(await writer.write(fd, receivedBlock(block), 0, sha256(block)), true);
    const started = (await readdir('/proc/self/task')).filter((task) => !before.has(task));
    t.ok(started.length > 0, 'a thread started');
    for (const task of started) {
      const stat = await readFile(`/proc/self/task/${task}/stat`, 'utf8').catch(() => undefined);
      if (stat === undefined) continue;
      const nice = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
      // As the test runner's own (a runner under `nice -n 10` starts threads at 10 already).
      t.equal(nice, own, `task ${task} is not lowered as a scan's thread is (by ${HASHING_NICENESS})`);
    }
  },
);

t.test('closing fails the blocks not yet written, and nothing is written once it has resolved', async (t) => {
  const { path, fd, writer } = await setup(t, 1);
  const blocks = Array.from({ length: 32 }, () => randomBytes(1024 * 1024));
  const settled: string[] = [];
  // Each in a turn of its own: a message of its own to the thread, which answers them one by one.
  const writes: Array<Promise<unknown>> = [];
  for (const [index, block] of blocks.entries()) {
    writes.push(
      writer.write(fd, receivedBlock(block), index * block.length, sha256(block)).then(
        () => settled.push('written'),
        (error: Error) => settled.push(error.message),
      ),
    );
    await new Promise((resolve) => setImmediate(resolve));
  }
  // Once the first block is written, the thread is at work on the others.
  await Promise.race(writes);
  await writer.close();
  const size = (await readFile(path)).length;
  await Promise.all(writes);
  t.ok(settled.includes('the block writer closed'), 'blocks not written fail');
  t.equal((await readFile(path)).length, size, 'nothing is written after close resolved');
  await t.rejects(writer.write(fd, receivedBlock(blocks[0] as Buffer), 0, sha256(blocks[0] as Buffer)), {
    message: 'the block writer is closed',
  });
});

t.test("a received block's memory moves to a thread and back, and is not held there", async (t) => {
  const { path, fd, writer } = await setup(t);
  const block = randomBytes(1024 * 1024);
  const hash = sha256(block);
  const data = receivedBlock(block);
  t.equal(await writer.write(fd, data, 0, hash), true);
  t.equal(data.length, 0, 'moved: empty here');
  t.ok((await readFile(path)).equals(block), 'written whole');
  // 384 MiB through the threads, a MiB at a time: memory a thread kept (as shared memory was, until
  // its own collector ran) would show as hundreds of MB more.
  const before = process.memoryUsage().rss;
  for (let round = 0; round < 384; round += 8) {
    const writes = Array.from({ length: 8 }, (_, i) =>
      writer.write(fd, receivedBlock(block), ((round + i) % 16) * block.length, hash),
    );
    t.ok((await Promise.all(writes)).every(Boolean) || t.fail('a block not written'));
  }
  const grown = (process.memoryUsage().rss - before) / 1e6;
  t.ok(grown < 200, `the process grew by ${grown.toFixed(0)} MB, not by what went through`);
});
