// What the index exchange sends a device, in process, with a real index: a full index starts with a
// small Index at once and goes on in IndexUpdates on later passes of the event loop, every record
// once and in sequence order, a rename's deletion kept with its batch.
import { join } from 'node:path';
import { create } from '@bufbuild/protobuf';
import t, { type Test } from 'tap';
import { emptyConfiguration, FOLDER_DEFAULTS, FOLDER_DEVICE } from '../../../shared/config/defaults.ts';
import { deviceIdFromRaw, rawDeviceId } from '../../../shared/device-id.ts';
import { ClusterConfigSchema } from '../../../worker/bep/bep_pb.ts';
import type { MessageOf } from '../../../worker/bep/messages.ts';
import { type IndexPeer, IndexExchange } from '../../../worker/devices/index-exchange.ts';
import { EventLog } from '../../../worker/events/event-log.ts';
import type { FileRecord } from '../../../worker/records/file-record.ts';
import { IndexDb } from '../../../worker/index-db/index-db.ts';
import { silentLogger } from '../../helpers/app.ts';
import { testDeviceId } from '../../helpers/config.ts';

const PEER = deviceIdFromRaw(Buffer.alloc(32, 1));

const record = (name: string, deleted = false): Omit<FileRecord, 'sequence'> => ({
  name,
  type: 'file',
  size: deleted ? 0 : 5,
  permissions: 0o644,
  modifiedS: 1_700_000_000,
  modifiedNs: 0,
  modifiedBy: 1n,
  deleted,
  invalid: false,
  noPermissions: false,
  version: [{ id: 1n, value: 1n }],
  blockSize: deleted ? 0 : 131072,
  blocks: deleted ? [] : [{ offset: 0, size: 5, hash: Buffer.alloc(32, 9), weakHash: 0 }],
  symlinkTarget: '',
});

type Sent = { kind: 'Index' | 'IndexUpdate'; names: string[]; sequences: bigint[] };

async function setup(t: Test) {
  const db = await IndexDb.open(join(t.testdir(), 'index.sqlite'));
  t.teardown(() => db.close());
  const config = emptyConfiguration();
  config.folders.push({
    ...FOLDER_DEFAULTS,
    id: 'f',
    path: '/nowhere',
    devices: [{ ...FOLDER_DEVICE, deviceID: PEER }],
  });
  const exchange = new IndexExchange({
    db,
    myId: testDeviceId,
    events: new EventLog(),
    logger: silentLogger(),
    config: () => config,
  });
  const sent: Sent[] = [];
  const peer: IndexPeer = {
    device: PEER,
    send: ({ kind, body }) =>
      sent.push({
        kind,
        names: body.files.map((file) => file.name),
        sequences: body.files.map((file) => file.sequence),
      }),
  };
  // As a Syncthing that has seen this device's index ID (a folder it was offered) but none of it.
  const clusterConfig = (): MessageOf<'ClusterConfig'> =>
    create(ClusterConfigSchema, {
      folders: [
        {
          id: 'f',
          devices: [
            { id: rawDeviceId(PEER), indexId: 5n, maxSequence: 0n },
            { id: rawDeviceId(testDeviceId), indexId: db.folder('f').indexId, maxSequence: 0n },
          ],
        },
      ],
    });
  const settled = async () => {
    for (let pass = 0, before = -1; before !== sent.length || pass < 3; pass++) {
      before = sent.length;
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { db, exchange, sent, peer, clusterConfig, settled };
}

t.test(
  'a full index: a small Index at once, the rest in updates later, each record once in order',
  async (t) => {
    const { db, exchange, sent, peer, clusterConfig, settled } = await setup(t);
    const names = Array.from({ length: 2500 }, (_, i) => `file${String(i).padStart(4, '0')}`);
    // The 100th file, then a deletion: a rename, which the first batch keeps whole.
    db.update('f', [...names.slice(0, 100).map((name) => record(name)), record('old-name', true)]);
    db.update(
      'f',
      names.slice(100).map((name) => record(name)),
    );

    exchange.clusterConfig(peer, clusterConfig());
    t.equal(sent.length, 1, 'one message at once');
    t.equal(sent[0]?.kind, 'Index', 'an Index: it replaces whatever the device had');
    t.same(
      sent[0]?.names,
      [...names.slice(0, 100), 'old-name'],
      'the first 100 files and the deletion after them',
    );

    // A change recorded while the rest is on its way goes with it, once.
    const [late] = db.update('f', [record('late')]);
    exchange.localUpdated('f', [late as FileRecord]);
    await settled();
    t.ok(sent.length >= 3, `the rest in later messages (${sent.length} in all)`);
    t.ok(
      sent.slice(1).every((message) => message.kind === 'IndexUpdate'),
      'the rest as IndexUpdates',
    );
    t.ok(
      sent.every((message) => message.names.length <= 1000),
      'at most 1,000 files a message',
    );
    const all = sent.flatMap((message) => message.names);
    t.same(
      all,
      [...names.slice(0, 100), 'old-name', ...names.slice(100), 'late'],
      'every record once, in order',
    );
    const sequences = sent.flatMap((message) => message.sequences);
    t.ok(
      sequences.every((sequence, i) => i === 0 || sequence > (sequences[i - 1] as bigint)),
      'sequences rise',
    );

    // Later changes go as updates of their own.
    const [another] = db.update('f', [record('another')]);
    exchange.localUpdated('f', [another as FileRecord]);
    await settled();
    t.same(sent.at(-1), { kind: 'IndexUpdate', names: ['another'], sequences: [another?.sequence] });
  },
);

t.test('a connection that ends stops its index from going on', async (t) => {
  const { db, exchange, sent, peer, clusterConfig, settled } = await setup(t);
  db.update(
    'f',
    Array.from({ length: 1500 }, (_, i) => record(`file${i}`)),
  );
  exchange.clusterConfig(peer, clusterConfig());
  t.equal(sent.length, 1);
  exchange.forget(peer);
  await settled();
  t.equal(sent.length, 1, 'nothing more after the connection ended');
});

t.test('an empty folder sends nothing', async (t) => {
  const { exchange, sent, peer, clusterConfig, settled } = await setup(t);
  exchange.clusterConfig(peer, clusterConfig());
  await settled();
  t.same(sent, [], 'no Index when there is nothing to send');
});
