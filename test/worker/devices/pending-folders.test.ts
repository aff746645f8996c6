import { Writable } from 'node:stream';
import { create } from '@bufbuild/protobuf';
import t from 'tap';
import { rawDeviceId } from '../../../shared/device-id.ts';
import { createLogger } from '../../../shared/logger.ts';
import { FolderSchema } from '../../../worker/bep/bep_pb.ts';
import { memoryDeviceStore } from '../../../worker/devices/device-store.ts';
import { PendingFolders } from '../../../worker/devices/pending-folders.ts';
import { EventLog } from '../../../worker/events/event-log.ts';
import { newDeviceId, testConfiguration, testDeviceId } from '../../helpers/config.ts';

const peer = newDeviceId();
const other = newDeviceId();
const offer = (id: string, label = id, encryptedFor?: string) =>
  create(FolderSchema, {
    id,
    label,
    devices: [testDeviceId, peer].map((device) => ({
      id: rawDeviceId(device),
      encryptionPasswordToken: device === encryptedFor ? new Uint8Array([1]) : new Uint8Array(),
    })),
  });

function setup() {
  const events = new EventLog();
  const pending = new PendingFolders({ store: memoryDeviceStore(), events, myId: testDeviceId });
  const subscription = events.subscription(['PendingFoldersChanged']);
  const seen: Array<Record<string, unknown>> = [];
  // Every change so far, in order.
  const changes = async () => {
    const fresh = await subscription.since(seen.length, 0);
    seen.push(...fresh.map((event) => event.data as Record<string, unknown>));
    return seen;
  };
  return { pending, changes };
}

const config = (folders: Array<{ id: string; devices: string[] }>, ignored: string[] = []) =>
  testConfiguration({
    devices: [
      { deviceID: peer, ignoredFolders: ignored.map((id) => ({ id, label: id, time: '' })) },
      { deviceID: other },
    ],
    folders: folders.map(({ id, devices }) => ({
      id,
      path: `/tmp/${id}`,
      devices: devices.map((deviceID) => ({ deviceID })),
    })),
  });

t.test('a folder offered and not shared with the device is pending, in Syncthing’s shape', async (t) => {
  const { pending, changes } = setup();
  const shared = config([{ id: 'shared', devices: [peer] }], ['ignored']);
  pending.offered(peer, [offer('shared'), offer('photos', 'Photos', testDeviceId), offer('ignored')], shared);
  const listed = pending.list();
  t.same(Object.keys(listed), ['photos'], 'neither the shared folder nor an ignored one');
  t.match(listed.photos?.offeredBy[peer], {
    label: 'Photos',
    receiveEncrypted: true,
    remoteEncrypted: false,
    time: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
  });
  t.same(pending.list(other), {}, 'by device: nothing from another');
  t.match(await changes(), [
    { added: [{ folderID: 'photos', folderLabel: 'Photos', deviceID: peer }], removed: [] },
  ]);

  pending.offered(peer, [offer('shared')], shared);
  t.same(pending.list(), {}, 'no longer offered: no longer pending');
  t.match((await changes()).at(-1), { added: [], removed: [{ folderID: 'photos', deviceID: peer }] });
});

t.test('dismissed, or shared, or from a device removed: gone', async (t) => {
  const { pending, changes } = setup();
  const none = config([]);
  pending.offered(peer, [offer('a'), offer('b')], none);
  pending.offered(other, [offer('a')], none);
  pending.dismiss('a', peer);
  t.same(Object.keys(pending.list()), ['a', 'b']);
  t.same(Object.keys(pending.list().a?.offeredBy ?? {}), [other], 'dismissed for one device only');
  pending.dismiss('a');
  t.same(Object.keys(pending.list()), ['b'], 'dismissed for every device');
  t.match((await changes()).at(-1), { removed: [{ folderID: 'a' }] });
  pending.configured(config([{ id: 'b', devices: [peer] }]));
  t.same(pending.list(), {}, 'shared now: no longer pending');
  pending.offered(other, [offer('c')], none);
  pending.configured(testConfiguration({ devices: [{ deviceID: peer }] }));
  t.same(pending.list(), {}, 'the device that offered it is no longer configured');
});

t.test('a new offer is logged once, saying how to accept or dismiss it', async (t) => {
  const lines: Array<{ msg: string }> = [];
  const logger = createLogger(
    'worker',
    'info',
    () => {},
    new Writable({
      write: (chunk, _encoding, done) => {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  );
  const pending = new PendingFolders({
    store: memoryDeviceStore(),
    events: new EventLog(),
    myId: testDeviceId,
    logger,
  });
  pending.offered(peer, [offer('photos', 'Photos')], config([]));
  pending.offered(peer, [offer('photos', 'Photos')], config([]));
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(lines.length, 1, 'once, not at every ClusterConfig');
  t.match(
    lines[0]?.msg,
    /unexpected folder "Photos" \(photos\) sent from device .*: .*POST \/rest\/config\/folders.*DELETE \/rest\/cluster\/pending\/folders\?folder=photos/,
  );
});
