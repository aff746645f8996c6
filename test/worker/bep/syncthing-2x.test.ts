// Syncthing 2.x's messages through syncd's codec, written as 2.x writes them (no 2.x binary is installed
// here): what it added or retyped on the wire (proto/bep/bep.proto at HEAD beside 1.19's) is read, and
// what syncd sends means the same to 1.19 and to 2.x.
import { create, toBinary } from '@bufbuild/protobuf';
import t from 'tap';
import { newDeviceId, testConfiguration } from '../../helpers/config.ts';
import {
  FileInfoSchema,
  FileInfoType,
  FolderSchema,
  FolderStopReason,
  FolderType,
} from '../../../worker/bep/bep_pb.ts';
import { fromFileInfo } from '../../../worker/bep/file-info.ts';
import { encodeHello, type Frame, FrameReader } from '../../../worker/bep/frames.ts';
import { clusterConfigFor, isRunning } from '../../../worker/devices/cluster-config.ts';
import { type FileFields, MessageType, rawFrame, sha256 } from '../../helpers/hostile-peer.ts';
import {
  helloV2,
  indexV2,
  platformData,
  V2_VERSION,
  varintFields,
  wire,
} from '../../helpers/syncthing-2x.ts';

function read(...chunks: Buffer[]): Frame[] {
  const reader = new FrameReader();
  const frames: Frame[] = [];
  for (const chunk of chunks) {
    reader.push(chunk);
    for (let frame = reader.next(); frame; frame = reader.next()) frames.push(frame);
  }
  return frames;
}

const hello = encodeHello({ deviceName: '', clientName: 'syncd', clientVersion: 'v0' });
const peer = newDeviceId();

t.test("2.x's Hello is read with its wanted connections and its timestamp", async (t) => {
  const [frame] = read(helloV2('laptop'));
  t.match(frame, {
    kind: 'hello',
    hello: { deviceName: 'laptop', clientName: 'syncthing', clientVersion: V2_VERSION, numConnections: 3 },
  });
  if (frame?.kind === 'hello') t.ok(frame.hello.timestamp > 0n, 'its timestamp');
});

t.test('a ClusterConfig from 2.x: folder types 0 to 3, stop reasons, no fields 4 to 6', async (t) => {
  const folder = (id: string, type: number | bigint, stop: number | bigint) =>
    wire.bytes(1, wire.string(1, id), wire.string(2, id), wire.varint(3, type), wire.varint(7, stop));
  const body = Buffer.concat([
    folder('sendreceive', 0, 0),
    folder('sendonly', 1, 0),
    folder('receiveonly', 2, 1),
    folder('receiveencrypted', 3, 0),
    // A type or a stop reason of a later version: read, not a broken message.
    folder('later', 7, 2),
  ]);
  const [, frame] = read(hello, rawFrame(MessageType.CLUSTER_CONFIG, body));
  t.equal(frame?.kind, 'message');
  if (frame?.kind !== 'message' || frame.message.kind !== 'ClusterConfig') return;
  const folders = frame.message.body.folders;
  t.same(
    folders.map((entry) => [entry.id, entry.type, isRunning(entry)]),
    [
      ['sendreceive', FolderType.SEND_RECEIVE, true],
      ['sendonly', FolderType.SEND_ONLY, true],
      ['receiveonly', FolderType.RECEIVE_ONLY, false],
      ['receiveencrypted', FolderType.RECEIVE_ENCRYPTED, true],
      // Only PAUSED stops a folder, as 2.x reads it (bep_clusterconfig.go IsRunning).
      ['later', 7, true],
    ],
  );
  t.notOk(frame.message.body.secondary);
  const [, secondary] = read(hello, rawFrame(MessageType.CLUSTER_CONFIG, wire.varint(2, 1)));
  t.match(secondary, { kind: 'message', message: { kind: 'ClusterConfig', body: { secondary: true } } });
});

t.test("syncd's ClusterConfig means the same to 1.19 (bools) and to 2.x (enums)", async (t) => {
  const config = testConfiguration({
    devices: [{ deviceID: peer }],
    folders: ['sendreceive', 'sendonly', 'receiveonly'].map((type) => ({
      id: type,
      path: `/nowhere/${type}`,
      type,
      paused: type === 'sendonly',
      disableTempIndexes: type === 'receiveonly',
      devices: [{ deviceID: peer }],
    })),
  });
  const sent = clusterConfigFor(config, peer, () => ({ indexId: 0n, maxSequence: 0n }));
  const fields = new Map(
    sent.folders.map((folder) => [folder.id, varintFields(toBinary(FolderSchema, folder))]),
  );
  // Field 3: 1.19's read_only (any varint but 0 is true), 2.x's type: 1 is SEND_ONLY to 2.x.
  t.same(Object.fromEntries([...fields].map(([id, f]) => [id, f.get(3)])), {
    sendreceive: undefined,
    sendonly: 1n,
    // 2 would be read_only to 1.19: a receive-only folder goes as 1.19 sends it, false.
    receiveonly: undefined,
  });
  // Field 7: 1.19's paused, 2.x's stop reason PAUSED.
  t.equal(fields.get('sendonly')?.get(7), 1n);
  t.equal(fields.get('sendreceive')?.get(7), undefined);
  t.equal(FolderStopReason.PAUSED, 1);
  // Field 6: 1.19's disable_temp_indexes, still sent to it; 2.x has it reserved and skips it.
  t.equal(fields.get('receiveonly')?.get(6), 1n);
});

t.test('an Index and an IndexUpdate as 2.x writes them are read, each file as 1.19 would', async (t) => {
  const data = Buffer.from('hello from 2.x');
  const file = Buffer.concat([
    toBinary(
      FileInfoSchema,
      create(FileInfoSchema, {
        name: 'a.txt',
        size: BigInt(data.length),
        sequence: 1n,
        blockSize: 131072,
        version: { counters: [{ id: 1n, value: 1n }] },
        // No weak hash: 2.x has none.
        blocks: [{ offset: 0n, size: data.length, hash: sha256(data) }],
        blocksHash: sha256(sha256(data)),
      }),
    ),
    platformData(),
    wire.bytes(20, sha256(Buffer.from('the previous blocks'))),
  ]);
  const other = (fields: FileFields) =>
    Buffer.concat([toBinary(FileInfoSchema, create(FileInfoSchema, fields)), platformData()]);
  const files = [
    file,
    // 2.x's directories have the synthetic size 128 on the wire.
    other({ name: 'dir', type: FileInfoType.DIRECTORY, size: 128n, sequence: 2n }),
    other({ name: 'link', type: FileInfoType.SYMLINK, symlinkTarget: Buffer.from('dir/ünï'), sequence: 3n }),
    // A Linux target of any bytes: 2.x sends them as they are.
    other({
      name: 'raw',
      type: FileInfoType.SYMLINK,
      symlinkTarget: Buffer.from([0x74, 0xff]),
      sequence: 4n,
    }),
  ];
  const frames = read(
    hello,
    rawFrame(MessageType.INDEX, indexV2('f', files, 4n)),
    rawFrame(MessageType.INDEX_UPDATE, indexV2('f', files.slice(1, 2), 5n, 4n)),
  );
  t.match(
    frames.slice(1).map((frame) => frame.kind === 'message' && frame.message),
    [
      { kind: 'Index', body: { folder: 'f', lastSequence: 4n, files: { length: 4 } } },
      {
        kind: 'IndexUpdate',
        body: { folder: 'f', lastSequence: 5n, prevSequence: 4n, files: { length: 1 } },
      },
    ],
  );
  const [, index] = frames;
  if (index?.kind !== 'message' || index.message.kind !== 'Index') return;
  const records = index.message.body.files.map(fromFileInfo);
  t.match(records, [
    { name: 'a.txt', invalid: false, blocks: [{ size: data.length, weakHash: 0 }] },
    { name: 'dir', type: 'directory', size: 128, blocks: [] },
    { name: 'link', type: 'symlink', symlinkTarget: 'dir/ünï', invalid: false },
    // Kept as a version known, never made: syncd keeps a target as text.
    { name: 'raw', type: 'symlink', symlinkTarget: '', invalid: true },
  ]);
});
