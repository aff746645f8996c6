// LZ4 on a BEP Index of 1,000 files (names, metadata and incompressible hashes, as Syncthing sends
// them): compression with lz4js, decompression with syncd's bounds-checked decoder beside lz4js's
// unchecked one. `node --import tsx scripts/bench/lz4.ts`.
import { randomBytes } from 'node:crypto';
import { create, toBinary } from '@bufbuild/protobuf';
import { decompressBlock } from 'lz4js';
import { IndexSchema } from '../../worker/bep/bep_pb.ts';
import { lz4Compress, lz4Decompress } from '../../worker/bep/lz4.ts';

const files = Array.from({ length: 1000 }, (_, i) => ({
  name: `folder/sub${i % 30}/file-${i}.txt`,
  size: BigInt(4096 + i),
  permissions: 0o644,
  modifiedS: 1_790_000_000n + BigInt(i),
  version: { counters: [{ id: 18402600965208236736n, value: 1_790_000_000n + BigInt(i) }] },
  sequence: BigInt(i + 1),
  blocks: [{ offset: 0n, size: 4096 + i, hash: randomBytes(32), weakHash: i * 7919 }],
}));
const body = toBinary(IndexSchema, create(IndexSchema, { folder: 'default', files }));
const framed = lz4Compress(body);
if (!framed) throw new Error('the index did not compress');
const rounds = 300;
const time = (run: () => unknown) => {
  for (let i = 0; i < 20; i++) run();
  const started = performance.now();
  for (let i = 0; i < rounds; i++) run();
  return (performance.now() - started) / rounds;
};
const rate = (ms: number) => `${((body.length / 1e6 / ms) * 1000).toFixed(0)} MB/s`;
const compress = time(() => lz4Compress(body));
const ours = time(() => lz4Decompress(framed, 1e9));
const dst = new Uint8Array(body.length);
const theirs = time(() => decompressBlock(framed, dst, 4, framed.length - 4, 0));
process.stdout.write(
  `an Index of ${body.length} bytes compresses to ${framed.length} (${((100 * framed.length) / body.length).toFixed(0)} %)\n` +
    `compress (lz4js): ${rate(compress)}; decompress: syncd's checked decoder ${rate(ours)}, lz4js's unchecked one ${rate(theirs)}\n`,
);
