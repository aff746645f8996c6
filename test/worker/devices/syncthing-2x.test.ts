// A device that speaks as Syncthing 2.x does (no 2.x binary is installed here: a scripted peer over real
// TLS), against syncd's real connections, index exchange, block server and index, in process: its Hello
// and how syncd shows it, its ClusterConfigs (a secondary one skipped, folder types and stop reasons),
// its indexes with 2.x's fields, the index syncd sends it checked by 2.x's own rules, and an extra
// connection that leaves the first one alone.
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { create, toBinary } from '@bufbuild/protobuf';
import t from 'tap';
import { rawDeviceId } from '../../../shared/device-id.ts';
import {
  ClusterConfigSchema,
  ErrorCode,
  FileInfoSchema,
  FileInfoType,
  FolderStopReason,
  FolderType,
  RequestSchema,
} from '../../../worker/bep/bep_pb.ts';
import { BlockServer } from '../../../worker/devices/block-server.ts';
import { DeviceConnections, shownVersion } from '../../../worker/devices/device-connections.ts';
import { memoryDeviceStore } from '../../../worker/devices/device-store.ts';
import { IndexExchange } from '../../../worker/devices/index-exchange.ts';
import { EventLog } from '../../../worker/events/event-log.ts';
import { silentLogger } from '../../helpers/app.ts';
import { localConfig, testConfiguration } from '../../helpers/config.ts';
import { newTestDevice } from '../../helpers/device.ts';
import { type FileFields, HostilePeer, MessageType, rawFrame, sha256 } from '../../helpers/hostile-peer.ts';
import { indexedFolder } from '../../helpers/indexed-folder.ts';
import { pollUntil } from '../../helpers/syncthing.ts';
import {
  consistencyProblem,
  helloV2,
  indexV2,
  platformData,
  V2_VERSION,
  wire,
} from '../../helpers/syncthing-2x.ts';

const quick = { pingEveryMs: 60_000, receiveTimeoutMs: 120_000, helloTimeoutMs: 5000 };
const content = Buffer.from('served to 2.x');

t.test('a Syncthing 2.x peer connects, exchanges indexes and keeps one connection', async (t) => {
  const [me, st2] = [await newTestDevice(), await newTestDevice()];
  // The folder syncd shares: a file, an empty one, a directory, a symlink, and a deletion.
  const { path, db, scan } = await indexedFolder(t, { shortId: 7n });
  await mkdir(join(path, 'dir'));
  await writeFile(join(path, 'dir', 'a.txt'), content);
  await writeFile(join(path, 'empty'), '');
  await writeFile(join(path, 'gone'), 'soon deleted');
  await symlink('dir', join(path, 'link'));
  await scan();
  await rm(join(path, 'gone'));
  await scan();

  const local = localConfig(
    testConfiguration(
      {
        devices: [{ deviceID: st2.id, addresses: ['dynamic'] }],
        folders: [{ id: 'f', path, devices: [{ deviceID: st2.id }] }],
      },
      me.id,
    ),
    me.id,
  );
  const events = new EventLog();
  const subscription = events.subscription(EventLog.defaultTypes);
  const config = () => local.config.current;
  const exchange = new IndexExchange({ db, myId: me.id, events, logger: silentLogger(), config });
  const blocks = new BlockServer({ db, config });
  const connections = new DeviceConnections({
    myId: me.id,
    credentials: me,
    config: local.config,
    events,
    logger: silentLogger(),
    store: memoryDeviceStore(),
    index: (folder, device) => exchange.known(folder, device),
    exchange,
    blocks,
    times: quick,
  });
  const server = createServer((socket) => connections.accept(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = `tcp://127.0.0.1:${(server.address() as { port: number }).port}`;
  const opened: HostilePeer[] = [];
  t.teardown(async () => {
    for (const peer of opened) peer.socket.destroy();
    await connections.close();
    await new Promise((resolve) => server.close(resolve));
    blocks.close();
  });
  const types = async (type: string) =>
    (await subscription.since(0, 0)).filter((event) => event.type === type);

  const peer = await HostilePeer.connect(address, st2, undefined, helloV2());
  opened.push(peer);
  const connection = await pollUntil('connected', async () => connections.connections.get(st2.id), 10_000);
  t.match(connection, { clientName: 'syncthing', clientVersion: V2_VERSION, type: 'tcp-server' });
  t.equal(shownVersion(connection), V2_VERSION, 'shown as any Syncthing: its version alone');
  await peer.until("syncd's Hello", () => peer.hello);
  t.match(peer.hello, { clientName: 'syncd', numConnections: 0, timestamp: 0n }, 'one connection wanted');

  // As 2.x sends it on a connection it has not yet promoted: no folders, and skipped.
  const secondary = create(ClusterConfigSchema, { secondary: true });
  peer.send({ kind: 'ClusterConfig', body: secondary });
  const indexId = 0x2222n;
  peer.send({
    kind: 'ClusterConfig',
    body: create(ClusterConfigSchema, {
      folders: [
        {
          id: 'f',
          label: 'f',
          // Sent as 2.x's type; a receive-only folder there, which 1.19 never said.
          type: FolderType.RECEIVE_ONLY,
          devices: [{ id: rawDeviceId(me.id) }, { id: rawDeviceId(st2.id), indexId, maxSequence: 3n }],
        },
        {
          id: 'offered',
          label: 'Offered',
          type: FolderType.RECEIVE_ENCRYPTED,
          stopReason: FolderStopReason.PAUSED,
          devices: [{ id: rawDeviceId(me.id) }, { id: rawDeviceId(st2.id) }],
        },
      ],
    }),
  });

  // syncd's index of the folder, every FileInfo as 2.x checks it.
  const sent = await peer.until('the whole index', () => {
    const files = peer.messages.flatMap((m) =>
      (m.kind === 'Index' || m.kind === 'IndexUpdate') && m.body.folder === 'f' ? m.body.files : [],
    );
    return files.length >= 5 && files;
  });
  t.same(
    sent.map((info) => info.name).sort(),
    ['dir', 'dir/a.txt', 'empty', 'gone', 'link'],
    'the folder, the deletion with it',
  );
  t.same(
    sent.map(consistencyProblem).filter((problem) => problem !== undefined),
    [],
    "nothing 2.x's checkFileInfoConsistency refuses",
  );

  // 2.x's index: its fields, a directory of size 128, a target of bytes that are not UTF-8.
  const file = (fields: FileFields, ...extra: Buffer[]) =>
    Buffer.concat([
      toBinary(
        FileInfoSchema,
        create(FileInfoSchema, { version: { counters: [{ id: 9n, value: 1n }] }, ...fields }),
      ),
      platformData(),
      ...extra,
    ]);
  const theirs = Buffer.from('their file');
  peer.sendRaw(
    rawFrame(
      MessageType.INDEX,
      indexV2(
        'f',
        [
          file(
            {
              name: 'theirs.txt',
              size: BigInt(theirs.length),
              sequence: 1n,
              blockSize: 131072,
              blocks: [{ offset: 0n, size: theirs.length, hash: sha256(theirs) }],
            },
            wire.bytes(20, sha256(Buffer.from('before'))),
          ),
          file({ name: 'their dir', type: FileInfoType.DIRECTORY, size: 128n, sequence: 2n }),
          file({
            name: 'raw link',
            type: FileInfoType.SYMLINK,
            symlinkTarget: Buffer.from([0x74, 0xff]),
            sequence: 3n,
          }),
        ],
        3n,
      ),
    ),
  );
  peer.sendRaw(
    rawFrame(
      MessageType.INDEX_UPDATE,
      indexV2('f', [file({ name: 'later', type: FileInfoType.DIRECTORY, size: 128n, sequence: 4n })], 4n, 3n),
    ),
  );
  await pollUntil('both kept', async () => db.file('f', 'later', st2.id), 10_000);
  t.match(db.file('f', 'their dir', st2.id), { type: 'directory', size: 128 });
  t.match(db.file('f', 'raw link', st2.id), { type: 'symlink', invalid: true, symlinkTarget: '' });
  t.match(db.file('f', 'theirs.txt', st2.id), { blocks: [{ weakHash: 0 }] });
  t.equal(db.remoteIndex('f', st2.id).maxSequence, 4);

  // Once more, after the indexes: a secondary ClusterConfig changes nothing it said.
  peer.send({ kind: 'ClusterConfig', body: secondary });
  const ask = (id: number) => {
    const record = db.file('f', 'dir/a.txt') as { blocks: Array<{ hash: Uint8Array }> };
    peer.send({
      kind: 'Request',
      body: create(RequestSchema, {
        id,
        folder: 'f',
        name: 'dir/a.txt',
        size: content.length,
        hash: record.blocks[0]?.hash,
      }),
    });
    return peer.until(`the Response to ${id}`, () => peer.responses.find((response) => response.id === id));
  };
  t.match(await ask(1), { code: ErrorCode.NO_ERROR, data: content }, 'a block asked for is served');
  t.equal((await types('ClusterConfigReceived')).length, 1, 'only the full ClusterConfig was acted on');
  t.match(connections.pendingFolders.list(), { offered: { offeredBy: { [st2.id]: { label: 'Offered' } } } });

  // An extra connection from the device while the first is new: refused, the first left as it was.
  const extra = await HostilePeer.connect(address, st2, undefined, helloV2());
  opened.push(extra);
  extra.send({ kind: 'ClusterConfig', body: secondary });
  // Closed as 1.19 closes it, after the Hellos and without a word more (connections/service.go).
  t.ok(await extra.closedWithin(10_000), 'the extra connection is closed');
  t.same(extra.messages, [], 'nothing sent on it');
  t.equal(connections.connections.get(st2.id), connection, 'the first connection stays the one');
  t.notOk(peer.closed);
  t.match(await ask(2), { code: ErrorCode.NO_ERROR, data: content }, 'and still serves');
  t.equal((await types('DeviceDisconnected')).length, 0);
});
