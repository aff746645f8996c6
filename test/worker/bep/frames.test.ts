import { randomBytes } from 'node:crypto';
import { create, toBinary } from '@bufbuild/protobuf';
import { compressBlock } from 'lz4js';
import t from 'tap';
import {
  ClusterConfigSchema,
  CloseSchema,
  ErrorCode,
  HeaderSchema,
  MessageType,
  PingSchema,
  ResponseSchema,
} from '../../../worker/bep/bep_pb.ts';
import {
  encodeHello,
  encodeMessage,
  type Frame,
  FrameReader,
  giveBack,
  isReusable,
  ProtocolError,
  responseRoom,
} from '../../../worker/bep/frames.ts';
import { Lz4Error, lz4Compress, lz4Decompress } from '../../../worker/bep/lz4.ts';
import type { BepMessage } from '../../../worker/bep/messages.ts';
import { rawFrame } from '../../helpers/hostile-peer.ts';

const hex = (text: string) => Buffer.from(text.replace(/\s/g, ''), 'hex');

function readAll(reader: FrameReader, ...chunks: Buffer[]): Frame[] {
  const frames: Frame[] = [];
  for (const chunk of chunks) {
    reader.push(chunk);
    for (let frame = reader.next(); frame; frame = reader.next()) frames.push(frame);
  }
  return frames;
}

function afterHello(): FrameReader {
  const reader = new FrameReader();
  readAll(reader, encodeHello({ deviceName: '', clientName: 'x', clientVersion: 'v0' }));
  return reader;
}

t.test('the Hello Syncthing 1.19 sent is read, and ours is framed as it frames its own', async (t) => {
  const observed = hex('2ea7d90b 001d 0a03737432 120973796e637468696e67 1a0b76312e31392e322d647331');
  const [frame] = readAll(new FrameReader(), observed);
  t.equal(frame?.kind, 'hello');
  if (frame?.kind !== 'hello') return;
  t.match(frame.hello, { deviceName: 'st2', clientName: 'syncthing', clientVersion: 'v1.19.2-ds1' });
  t.same(encodeHello({ deviceName: 'st2', clientName: 'syncthing', clientVersion: 'v1.19.2-ds1' }), observed);
});

t.test("messages are framed byte for byte as Syncthing's observed frames", async (t) => {
  const ping: BepMessage = { kind: 'Ping', body: create(PingSchema) };
  t.same(encodeMessage(ping), hex('0002 0806 00000000'), 'Ping');
  const empty: BepMessage = { kind: 'ClusterConfig', body: create(ClusterConfigSchema) };
  t.same(encodeMessage(empty), hex('0000 00000000'), 'an empty ClusterConfig: a header of zero bytes');
  const close: BepMessage = { kind: 'Close', body: create(CloseSchema, { reason: 'probe done' }) };
  t.same(
    encodeMessage(close),
    Buffer.concat([hex('0002 0807 0000000c 0a0a'), Buffer.from('probe done')]),
    'Close',
  );
  const data = Buffer.from('01234567890123456789');
  const response: BepMessage = { kind: 'Response', body: create(ResponseSchema, { id: 0, data }) };
  t.same(encodeMessage(response), Buffer.concat([hex('0002 0804 00000016 1214'), data]), 'Response id 0');
});

t.test('a Response framed directly has the bytes protobuf gives it, and reads back', async (t) => {
  const header = toBinary(HeaderSchema, create(HeaderSchema, { type: MessageType.RESPONSE }));
  const cases = [
    { id: 0, data: new Uint8Array(0), code: ErrorCode.NO_ERROR },
    { id: 1, data: Buffer.from('x'), code: ErrorCode.NO_ERROR },
    { id: 127, data: randomBytes(127), code: ErrorCode.NO_ERROR },
    { id: 128, data: randomBytes(128), code: ErrorCode.GENERIC },
    { id: 2 ** 31 - 1, data: randomBytes(128 * 1024), code: ErrorCode.INVALID_FILE },
    { id: -1, data: new Uint8Array(0), code: ErrorCode.NO_SUCH_FILE },
    { id: -(2 ** 31), data: randomBytes(16 * 1024 * 1024), code: ErrorCode.NO_ERROR },
  ];
  for (const fields of cases) {
    const body = create(ResponseSchema, fields);
    const payload = toBinary(ResponseSchema, body);
    const expected = Buffer.concat([
      Buffer.from([0, header.length]),
      header,
      Buffer.from(Uint32Array.of(payload.length).buffer).reverse(),
      payload,
    ]);
    const label = `id ${fields.id}, ${fields.data.length} bytes, code ${fields.code}`;
    const framed = encodeMessage({ kind: 'Response', body });
    t.ok(framed.equals(expected), label);
    const [frame] = readAll(afterHello(), framed);
    t.ok(frame?.kind === 'message' && frame.message.kind === 'Response', `${label} reads back`);
    if (frame?.kind !== 'message' || frame.message.kind !== 'Response') continue;
    t.equal(frame.message.body.id, fields.id);
    t.equal(frame.message.body.code, fields.code);
    t.ok(Buffer.from(frame.message.body.data).equals(fields.data));
  }
});

t.test('a block read into its room goes out in that frame, as protobuf would encode it', async (t) => {
  const block = randomBytes(128 * 1024);
  const generic = (id: number, code: ErrorCode, data: Uint8Array) =>
    encodeMessage({ kind: 'Response', body: create(ResponseSchema, { id, code, data: Buffer.from(data) }) });
  const room = responseRoom(7, block.length);
  block.copy(room);
  const framed = encodeMessage({ kind: 'Response', body: create(ResponseSchema, { id: 7, data: room }) });
  t.ok(framed.equals(generic(7, ErrorCode.NO_ERROR, block)), 'the same bytes');
  t.equal(framed.buffer, room.buffer, 'the frame the room is in: no copy');
  const other = encodeMessage({ kind: 'Response', body: create(ResponseSchema, { id: 8, data: room }) });
  t.ok(other.equals(generic(8, ErrorCode.NO_ERROR, block)), 'another id: framed anew');
  const failed = encodeMessage({
    kind: 'Response',
    body: create(ResponseSchema, { id: 7, data: room, code: ErrorCode.GENERIC }),
  });
  t.ok(failed.equals(generic(7, ErrorCode.GENERIC, block)), 'another code: framed anew');
  t.equal(responseRoom(9, 0).length, 0, 'an empty block has an empty room');
});

t.test(
  "a Response's frame is reused once written, and only then, with every byte written anew",
  async (t) => {
    const generic = (id: number, data: Uint8Array) =>
      encodeMessage({ kind: 'Response', body: create(ResponseSchema, { id, data: Buffer.from(data) }) });
    const send = (id: number, block: Buffer) => {
      const room = responseRoom(id, block.length);
      block.copy(room);
      return encodeMessage({ kind: 'Response', body: create(ResponseSchema, { id, data: room }) });
    };
    const first = randomBytes(256 * 1024);
    const sent = send(3, first);
    t.ok(isReusable(sent), 'a frame responseRoom made is reusable');
    const unwritten = send(4, first);
    t.not(unwritten.buffer, sent.buffer, 'a frame not yet written is not handed out again');
    giveBack(sent);
    const second = randomBytes(256 * 1024);
    const again = send(5, second);
    t.equal(again.buffer, sent.buffer, 'the written frame of the same length is reused');
    t.ok(again.equals(generic(5, second)), 'with the new id and block, byte for byte');
    t.ok(unwritten.equals(generic(4, first)), 'the frame still unwritten is untouched');
    const copied = encodeMessage({ kind: 'Response', body: create(ResponseSchema, { id: 6, data: second }) });
    t.notOk(isReusable(copied), 'a Response framed from data of its own is not');
    giveBack(copied);
    t.not(send(7, second).buffer, copied.buffer, 'and never comes back');
  },
);

t.test('a block received in pieces is joined into a buffer of its own, reused once given back', async (t) => {
  const blocks = [randomBytes(128 * 1024), randomBytes(128 * 1024), randomBytes(128 * 1024)];
  const framed = blocks.map((data, i) =>
    encodeMessage({ kind: 'Response', body: create(ResponseSchema, { id: i + 1, data }) }),
  );
  // In pieces of 16 KiB, as TLS delivers them, each frame's end in the same piece as the next's start.
  const stream = Buffer.concat(framed);
  const pieces = Array.from({ length: Math.ceil(stream.length / 16384) }, (_, i) =>
    stream.subarray(i * 16384, (i + 1) * 16384),
  );
  const reader = afterHello();
  const received = readAll(reader, ...pieces).map((frame) => {
    if (frame.kind !== 'message' || frame.message.kind !== 'Response') throw new Error('not a Response');
    return frame.message.body.data;
  });
  t.equal(received.length, 3);
  received.forEach((data, i) => t.ok(Buffer.from(data).equals(blocks[i] as Buffer), `block ${i + 1} intact`));
  t.not(received[0]?.buffer, received[1]?.buffer, 'each body in a buffer of its own');
  giveBack(received[0] as Uint8Array);
  const [next] = readAll(reader, framed[0] as Buffer);
  const data =
    next?.kind === 'message' && next.message.kind === 'Response' ? next.message.body.data : undefined;
  t.ok(data && Buffer.from(data).equals(blocks[0] as Buffer), 'a message read whole from one piece');
  // Joined again from pieces: the buffer given back is taken, the ones still held are not.
  const again = readAll(
    reader,
    ...Array.from({ length: 9 }, (_, i) => (framed[2] as Buffer).subarray(i * 16384, (i + 1) * 16384)),
  );
  const reused =
    again[0]?.kind === 'message' && again[0].message.kind === 'Response'
      ? again[0].message.body.data
      : undefined;
  t.equal(reused?.buffer, received[0]?.buffer, 'the buffer given back is reused');
  t.ok(reused && Buffer.from(reused).equals(blocks[2] as Buffer), 'holding the new block');
  t.ok(Buffer.from(received[1] as Uint8Array).equals(blocks[1] as Buffer), 'a block still held is untouched');
});

t.test('large messages go LZ4 compressed (but Responses only when asked), and read back', async (t) => {
  const folders = Array.from({ length: 20 }, (_, i) => ({
    id: `folder-${i}`,
    label: 'the same label again',
  }));
  const config: BepMessage = { kind: 'ClusterConfig', body: create(ClusterConfigSchema, { folders }) };
  const framed = encodeMessage(config);
  t.same(framed.subarray(0, 4), hex('0002 1001'), 'header: type 0, compression LZ4');
  const plain = encodeMessage(config, 'never');
  t.ok(framed.length < plain.length, `compressed ${framed.length} < ${plain.length}`);
  const data = Buffer.alloc(4096, 7);
  const response: BepMessage = { kind: 'Response', body: create(ResponseSchema, { id: 9, data }) };
  t.ok(encodeMessage(response).length > 4096, 'metadata: a Response is never compressed');
  t.ok(encodeMessage(response, 'always').length < 200, 'always: a Response is compressed too');
  const random: BepMessage = {
    kind: 'Response',
    body: create(ResponseSchema, { id: 1, data: randomBytes(4096) }),
  };
  t.same(encodeMessage(random, 'always').subarray(0, 4), hex('0002 0804'), 'incompressible: sent plain');
  const frames = readAll(afterHello(), framed, plain, encodeMessage(response, 'always'));
  t.equal(frames.length, 3);
  t.same(
    frames.map((f) => f.kind === 'message' && f.message.kind),
    ['ClusterConfig', 'ClusterConfig', 'Response'],
  );
  const first = frames[0];
  if (first?.kind === 'message' && first.message.kind === 'ClusterConfig') {
    t.same(
      first.message.body.folders.map((f) => f.id),
      folders.map((f) => f.id),
    );
  }
  const last = frames[2];
  if (last?.kind === 'message' && last.message.kind === 'Response')
    t.same(Buffer.from(last.message.body.data), data);
});

t.test('frames split anywhere, even byte by byte, read the same', async (t) => {
  const stream = Buffer.concat([
    encodeHello({ deviceName: 'a', clientName: 'b', clientVersion: 'c' }),
    encodeMessage({
      kind: 'ClusterConfig',
      body: create(ClusterConfigSchema, { folders: [{ id: 'f'.repeat(300) }] }),
    }),
    encodeMessage({ kind: 'Ping', body: create(PingSchema) }),
  ]);
  const bytes = [...stream].map((byte) => Buffer.from([byte]));
  const frames = readAll(new FrameReader(), ...bytes);
  t.same(
    frames.map((f) => (f.kind === 'hello' ? 'hello' : f.message.kind)),
    ['hello', 'ClusterConfig', 'Ping'],
  );
});

t.test('chunks in memory read into again (a dialed connection) leave nothing behind in it', async (t) => {
  const sizes = [1000, 200 * 1024, 3000, 70 * 1024, 0, 128 * 1024 + 5, 10];
  const blocks = sizes.map((size) => randomBytes(size));
  const stream = Buffer.concat([
    encodeHello({ deviceName: 'a', clientName: 'b', clientVersion: 'c' }),
    encodeMessage({
      kind: 'ClusterConfig',
      body: create(ClusterConfigSchema, { folders: [{ id: 'f'.repeat(300), label: 'l'.repeat(300) }] }),
    }),
    ...blocks.flatMap((data, id) => [
      encodeMessage({ kind: 'Response', body: create(ResponseSchema, { id, data }) }),
      encodeMessage({ kind: 'Ping', body: create(PingSchema) }),
    ]),
  ]);
  // One buffer, as Node's onread fills it: pieces of every size up to its own, and once the reader
  // is done with a piece, the buffer is scribbled over.
  const memory = Buffer.alloc(64 * 1024);
  const reader = new FrameReader();
  const frames: Frame[] = [];
  for (let at = 0, step = 1; at < stream.length; at += step, step = (step * 7919) % memory.length || 1) {
    const length = stream.copy(memory, 0, at, Math.min(stream.length, at + step));
    reader.push(memory.subarray(0, length), true);
    for (let frame = reader.next(); frame; frame = reader.next()) frames.push(frame);
    reader.release();
    memory.fill(0xaa);
  }
  t.same(
    frames.map((f) => (f.kind === 'hello' ? 'hello' : f.message.kind)),
    ['hello', 'ClusterConfig', ...blocks.flatMap(() => ['Response', 'Ping'])],
  );
  const config = frames[1];
  if (config?.kind === 'message' && config.message.kind === 'ClusterConfig') {
    t.equal(config.message.body.folders[0]?.label, 'l'.repeat(300), 'the ClusterConfig intact');
  }
  const received = frames.flatMap((f) =>
    f.kind === 'message' && f.message.kind === 'Response' ? [f.message.body] : [],
  );
  received.forEach((body, id) => {
    t.equal(body.id, id);
    t.ok(Buffer.from(body.data).equals(blocks[id] as Buffer), `block ${id} (${sizes[id]} bytes) intact`);
  });
});

t.test('a message of a type this version does not know is skipped', async (t) => {
  const unknown = hex('0002 0863 00000003 010203');
  const frames = readAll(afterHello(), unknown, encodeMessage({ kind: 'Ping', body: create(PingSchema) }));
  t.same(
    frames.map((f) => f.kind === 'message' && f.message.kind),
    ['Ping'],
  );
});

t.test(
  'what breaks the protocol is a ProtocolError naming it, before anything is allocated for it',
  async (t) => {
    const cases: Array<[string, () => FrameReader, Buffer, RegExp]> = [
      ['an unknown magic', () => new FrameReader(), hex('474554202f20485454'), /unknown magic 0x47455420/],
      ['a magic before v1', () => new FrameReader(), hex('00010001 0000'), /before BEP v1/],
      ['a Hello length out of range', () => new FrameReader(), hex('2ea7d90b ffff'), /Hello length 65535/],
      ['a malformed Hello', () => new FrameReader(), hex('2ea7d90b 0002 0aff'), /malformed Hello/],
      ['a header length out of range', afterHello, hex('8000'), /header length 32768/],
      [
        'a message over 16 MiB',
        afterHello,
        hex('0000 ffffffff'),
        /message length 4294967295 is over the limit/,
      ],
      ['an unknown compression', afterHello, hex('0002 1007 00000000'), /unknown message compression 7/],
      ['a malformed body', afterHello, hex('0002 0807 00000002 0a7f'), /malformed message of type 7/],
      [
        'an LZ4 size beyond any block',
        afterHello,
        hex('0002 1001 00000006 7fffffff 0000'),
        /claim 2147483647 decompressed, more than/,
      ],
      [
        'an LZ4 block shorter than it claims',
        afterHello,
        hex('0002 1001 00000006 00000010 1041'),
        /decoded to 1 bytes, not the 16/,
      ],
    ];
    for (const [what, reader, bytes, message] of cases) {
      t.throws(() => readAll(reader(), bytes), { name: 'Error', message }, what);
      t.throws(() => readAll(reader(), bytes), ProtocolError, `${what}: a ProtocolError`);
    }
    // A huge length is refused from its 6 bytes: nothing waits for, or holds, the rest.
    const reader = afterHello();
    t.throws(() => readAll(reader, hex('0000 20000000')), /over the limit/);
  },
);

t.test(
  'LZ4 blocks: lz4js blocks decode; hostile blocks are refused, never written out of bounds',
  async (t) => {
    const text = Buffer.from('abcabcabcabcabcabcabcabcabcabc the end, the end, the end'.repeat(50));
    const framed = lz4Compress(text);
    t.ok(framed, 'compressible');
    if (framed) t.same(lz4Decompress(framed, 1e6), text);
    const raw = Buffer.alloc(text.length * 2);
    const size = compressBlock(text, raw, 0, text.length, new Uint32Array(65536));
    const prefixed = Buffer.concat([Buffer.from([0, 0, 0, 0]), raw.subarray(0, size)]);
    prefixed.writeUInt32BE(text.length, 0);
    t.same(lz4Decompress(prefixed, 1e6), text, "lz4js's block, framed by hand");
    t.throws(() => lz4Decompress(prefixed, 100), { name: 'Lz4Error' }, 'over the caller’s limit');
    const hostile: Array<[string, string]> = [
      ['a match before the start', '00000008 1f ffff 00'],
      ['a zero offset', '00000008 10 41 0000'],
      ['literals past the input', '00000004 f0 ff'],
      ['a match past the output', '00000006 10 41 0100 ff ff ff'],
      ['a length that runs off the end', '00000004 f0'],
    ];
    for (const [what, bytes] of hostile)
      t.throws(() => lz4Decompress(hex(bytes), 1e6), { name: 'Lz4Error' }, what);
    for (let i = 0; i < 2000; i++) {
      const garbage = Buffer.concat([Buffer.from([0, 0, 1, 0]), randomBytes(1 + (i % 64))]);
      try {
        lz4Decompress(garbage, 1e6);
      } catch (error) {
        if (!(error instanceof Lz4Error)) throw error;
      }
    }
  },
);

t.test('random bytes after a Hello never throw anything but a ProtocolError', async (t) => {
  let refused = 0;
  for (let i = 0; i < 3000; i++) {
    const reader = afterHello();
    try {
      readAll(reader, randomBytes(1 + (i % 200)));
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      refused += 1;
    }
  }
  t.ok(refused > 0, `${refused} of 3000 refused, the rest incomplete or well formed`);
});

// A length-delimited protobuf field, built by hand: what a schema would not let a test send.
function field(no: number, body: Uint8Array): Buffer {
  return Buffer.concat([varint(no * 8 + 2), varint(body.length), body]);
}
function varint(value: number): Buffer {
  const out: number[] = [];
  for (; value >= 0x80; value = Math.floor(value / 128)) out.push((value % 128) | 0x80);
  out.push(value);
  return Buffer.from(out);
}
t.test('every message is bounded on its wire bytes before an object is made of them', async (t) => {
  const folder = field(1, Buffer.from('f'));
  const emptyFiles = (n: number) => Buffer.concat([folder, Buffer.alloc(n * 2, Buffer.from([0x12, 0x00]))]);
  const cases: Array<[string, Buffer, RegExp]> = [
    [
      'an Index of 10,001 files',
      rawFrame(MessageType.INDEX, emptyFiles(10_001)),
      /Index over a limit: more than 10000 files/,
    ],
    [
      'an IndexUpdate of 8 million files, 63 KB compressed',
      rawFrame(MessageType.INDEX_UPDATE, emptyFiles(8_000_000), true),
      /IndexUpdate over a limit: \d+ bytes of LZ4 claim 16000003 decompressed/,
    ],
    [
      'a file of 200,001 blocks',
      rawFrame(
        MessageType.INDEX,
        Buffer.concat([folder, field(2, Buffer.alloc(200_001 * 3, Buffer.from([0x82, 0x01, 0x00])))]),
      ),
      /more than 200000 entries/,
    ],
    [
      'a folder label of 1,025 bytes',
      rawFrame(
        MessageType.CLUSTER_CONFIG,
        field(1, Buffer.concat([field(1, Buffer.from('f')), field(2, Buffer.alloc(1025, 0x61))])),
      ),
      /ClusterConfig over a limit: a folder label of 1025 bytes, over the limit of 1024/,
    ],
    [
      'a file name of 4,097 bytes',
      rawFrame(MessageType.INDEX, Buffer.concat([folder, field(2, field(1, Buffer.alloc(4097, 0x61)))])),
      /a file name of 4097 bytes/,
    ],
    [
      '2 MiB of zeros in 8 KiB of LZ4',
      rawFrame(
        MessageType.INDEX,
        Buffer.concat([folder, field(2, field(1, Buffer.alloc(2 * 1024 * 1024)))]),
        true,
      ),
      /Index over a limit: \d+ bytes of LZ4 claim \d+ decompressed, more than \d+ \(at most 64 times/,
    ],
  ];
  for (const [what, bytes, message] of cases) {
    t.throws(() => readAll(afterHello(), bytes), { name: 'ProtocolError', message }, what);
  }
  // 16 MiB of one-byte block indexes would be 16 million numbers: another device's download progress
  // is not acted on, and not decoded.
  const progress = Buffer.concat([folder, field(2, field(4, Buffer.alloc(16 * 1024 * 1024, 1)))]);
  const [read] = readAll(afterHello(), rawFrame(MessageType.DOWNLOAD_PROGRESS, progress));
  t.match(read, { kind: 'message', message: { kind: 'DownloadProgress', body: { updates: [] } } });
  const legal = readAll(afterHello(), rawFrame(MessageType.INDEX, emptyFiles(10_000), true));
  t.equal(legal.length, 1, 'an Index of 10,000 files, at the bound, is read');
});
