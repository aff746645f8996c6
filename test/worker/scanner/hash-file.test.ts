import { createHash, randomBytes } from 'node:crypto';
import { truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { adler32 } from '../../../worker/checksums/adler32.ts';
import { hasSha256 } from '../../../worker/checksums/sha256.ts';
import { blockSizeFor, MAX_BLOCK_SIZE, MIN_BLOCK_SIZE } from '../../../worker/records/blocks.ts';
import { hashFile } from '../../../worker/scanner/hash-file.ts';

const MiB = 1024 * 1024;

t.test("Syncthing's block size rule, at each boundary", async (t) => {
  const cases: Array<[number, number]> = [
    [0, 128 * 1024],
    [250 * MiB - 1, 128 * 1024],
    [250 * MiB, 256 * 1024],
    [500 * MiB - 1, 256 * 1024],
    [500 * MiB, 512 * 1024],
    [1000 * MiB, 1 * MiB],
    [2000 * MiB - 1, 1 * MiB],
    // 2,000 blocks is not fewer than 2,000: the next size (Syncthing's BlockSize compares so).
    [2000 * MiB, 2 * MiB],
    [4000 * MiB - 1, 2 * MiB],
    [4000 * MiB, 4 * MiB],
    [8000 * MiB, 8 * MiB],
    [16_000 * MiB, MAX_BLOCK_SIZE],
    [1e15, MAX_BLOCK_SIZE],
  ];
  for (const [size, expected] of cases) t.equal(blockSizeFor(size), expected, `${size / MiB} MiB`);
  t.ok(cases.every(([size]) => size / blockSizeFor(size) < 2000 || blockSizeFor(size) === MAX_BLOCK_SIZE));
});

t.test('a rescanned file keeps its block size while the new one is within a factor of two', async (t) => {
  t.equal(blockSizeFor(250 * MiB, MIN_BLOCK_SIZE), MIN_BLOCK_SIZE, 'grew past a boundary: kept');
  t.equal(blockSizeFor(600 * MiB, MIN_BLOCK_SIZE), 512 * 1024, 'four times larger: changed');
  t.equal(blockSizeFor(10 * MiB, 256 * 1024), 256 * 1024, 'half: kept');
  t.equal(blockSizeFor(10 * MiB, 1 * MiB), MIN_BLOCK_SIZE, 'an eighth: changed');
});

t.test('Adler-32 as Go computes it', async (t) => {
  t.equal(adler32(Buffer.from('')), 1);
  t.equal(adler32(Buffer.from('Wikipedia')), 0x11e60398);
  // Past NMAX bytes the sums are reduced: a long run of 0xff is where an overflow would show.
  t.equal(adler32(Buffer.alloc(100_000, 0xff)), 345649196);
  const reference = (data: Buffer) => {
    let a = 1n;
    let b = 0n;
    for (const byte of data) {
      a = (a + BigInt(byte)) % 65521n;
      b = (b + a) % 65521n;
    }
    return Number((b << 16n) | a);
  };
  const data = Buffer.alloc(20_000);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7919) & 0xff;
  t.equal(adler32(data), reference(data), 'the same as a plain reference over 20,000 bytes');
  t.equal(adler32(data, 100, 5000), reference(data.subarray(100, 5000)), 'and over a slice');
  // Every length around the 16-byte vectors and the 5,552-byte chunks of the SIMD version.
  for (const length of [0, 1, 15, 16, 17, 31, 32, 33, 5551, 5552, 5553, 5568, 11_104, 11_105, 131_072]) {
    const bytes = Buffer.alloc(length);
    for (let i = 0; i < length; i++) bytes[i] = (i * 2654435761) >>> 24;
    t.equal(adler32(bytes), reference(bytes), `${length} bytes`);
    t.equal(
      adler32(Buffer.alloc(length, 0xff)),
      reference(Buffer.alloc(length, 0xff)),
      `${length} bytes of 0xff`,
    );
  }
});

t.test('a file is cut into blocks, the last one short; an empty file is one empty block', async (t) => {
  const dir = t.testdir();
  const path = join(dir, 'f');
  const data = Buffer.alloc(300_000);
  for (let i = 0; i < data.length; i++) data[i] = i & 0xff;
  await writeFile(path, data);
  const blocks = hashFile(path, data.length, MIN_BLOCK_SIZE);
  t.same(
    blocks.map((block) => [block.offset, block.size]),
    [
      [0, 131072],
      [131072, 131072],
      [262144, 37856],
    ],
  );
  t.same(blocks[2]?.hash, createHash('sha256').update(data.subarray(262144)).digest());
  t.equal(blocks[2]?.weakHash, adler32(data, 262144));

  await writeFile(join(dir, 'empty'), '');
  t.same(hashFile(join(dir, 'empty'), 0, MIN_BLOCK_SIZE), [
    { offset: 0, size: 0, hash: createHash('sha256').digest(), weakHash: 1 },
  ]);
  const exact = Buffer.alloc(MIN_BLOCK_SIZE * 2, 1);
  await writeFile(path, exact);
  t.equal(
    hashFile(path, exact.length, MIN_BLOCK_SIZE).length,
    2,
    'an exact multiple has no empty last block',
  );

  await truncate(path, 1000);
  t.throws(() => hashFile(path, exact.length, MIN_BLOCK_SIZE), {
    code: 'ECHANGED',
    message: /changed size while being read/,
  });
  t.throws(() => hashFile(join(dir, 'gone'), 5, MIN_BLOCK_SIZE), { code: 'ENOENT' });
});

t.test('a block is checked against its SHA-256, small ones in place and large ones elsewhere', async (t) => {
  for (const size of [0, 4096, 32 * 1024 - 1, 32 * 1024, 128 * 1024, 1024 * 1024]) {
    const data = randomBytes(size);
    const hash = createHash('sha256').update(data).digest();
    t.equal(await hasSha256(data, hash), true, `${size} bytes: its own hash`);
    const other = Buffer.from(hash);
    other[31] = (other[31] ?? 0) ^ 1;
    t.equal(await hasSha256(data, other), false, `${size} bytes: another hash`);
    // A view into a larger buffer is hashed as what it shows, not as the buffer under it.
    const wider = Buffer.concat([Buffer.alloc(7, 1), data, Buffer.alloc(9, 2)]);
    t.equal(await hasSha256(wider.subarray(7, 7 + size), hash), true, `${size} bytes: as a view`);
  }
});
