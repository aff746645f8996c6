// When a folder that does not pull tells its summary after other devices' index updates, in process
// with a real index and folder: as in Syncthing, only while a client watches the events, and its
// completion only for the devices connected.
import t from 'tap';
import { FOLDER_DEFAULTS, FOLDER_DEVICE } from '../../../shared/config/defaults.ts';
import { deviceIdFromRaw } from '../../../shared/device-id.ts';
import { EventLog } from '../../../worker/events/event-log.ts';
import { FolderRunner } from '../../../worker/folders/folder-runner.ts';
import type { FileRecord } from '../../../worker/records/file-record.ts';
import { silentLogger } from '../../helpers/app.ts';
import { testDeviceId } from '../../helpers/config.ts';
import { indexedFolder } from '../../helpers/indexed-folder.ts';

const CONNECTED = deviceIdFromRaw(Buffer.alloc(32, 1));
const AWAY = deviceIdFromRaw(Buffer.alloc(32, 2));

t.test(
  'summaries after index updates wait for a client of the events; completions only of connected devices',
  async (t) => {
    const { path, db, hasher } = await indexedFolder(t, { tree: { 'a.txt': 'hello' }, shortId: 7n });
    const events = new EventLog();
    const runner = new FolderRunner(
      {
        ...FOLDER_DEFAULTS,
        id: 'f',
        path,
        type: 'sendonly',
        rescanIntervalS: 0,
        fsWatcherEnabled: false,
        devices: [
          { ...FOLDER_DEVICE, deviceID: CONNECTED },
          { ...FOLDER_DEVICE, deviceID: AWAY },
        ],
      },
      {
        db,
        hasher,
        events,
        shortId: 7n,
        myId: testDeviceId,
        logger: silentLogger(),
        connected: () => new Set([CONNECTED]),
      },
    );
    t.teardown(() => runner.stop());
    await runner.scan();
    const seen = events.subscription(['FolderSummary', 'FolderCompletion']);
    const after = (await seen.since(0, 0)).at(-1)?.id ?? 0;

    // The connected device has the file.
    const mine = db.file('f', 'a.txt') as FileRecord;
    db.putRemote('f', CONNECTED, [{ ...mine, sequence: 1 }], true);
    runner.remoteUpdated();
    await new Promise((resolve) => setTimeout(resolve, 2600));
    t.same(await seen.since(after, 0), [], 'no summary while no client asks for events');

    const ended = events.watch();
    ended();
    const told = await seen.since(after, 3000);
    // Both come in one summary: give the completion a moment if the summary came alone.
    const all = told.some((event) => event.type === 'FolderCompletion')
      ? told
      : await seen.since(after, 1000);
    t.ok(
      all.some((event) => event.type === 'FolderSummary'),
      'a summary once a client has asked',
    );
    const completions = all.filter((event) => event.type === 'FolderCompletion');
    t.same(
      completions.map((event) => (event.data as { device: string }).device),
      [CONNECTED],
      'the completion of the connected device only',
    );
    t.match(completions[0]?.data, { folder: 'f', completion: 100 });
  },
);

t.test('a client waiting for events, or that asked within the last minute, watches them', async (t) => {
  const events = new EventLog();
  t.equal(events.watched, false, 'nobody at first');
  const ended = events.watch();
  t.equal(events.watched, true, 'while a request waits');
  ended();
  ended();
  t.equal(events.watched, true, 'for a minute after it ended');
});
