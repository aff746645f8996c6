// Synchronizing folders between syncd and real Syncthing 1.19 devices, on loopback: syncd pulls a
// folder (and the changes that follow, and a reset of its index rebuilds without a conflict), a
// conflict settles the same way on both sides, three devices pass files through each other, and a
// large transfer interrupted twice (a restart, a worker killed) goes on from its temporary file.
import { createHash, randomBytes } from 'node:crypto';
import {
  chmod,
  mkdir,
  open,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { api, startDevice, withNewWorker } from '../../helpers/service.ts';
import {
  hasSyncthing,
  NO_SYNCTHING,
  pollUntil,
  shareFolder,
  startSyncthing,
} from '../../helpers/syncthing.ts';

const skip = hasSyncthing ? false : NO_SYNCTHING;
// A name of 255 bytes (the most ext4 takes), in two-byte characters; another made on syncd.
const LONG_NAME = `${'é'.repeat(125)}.txt1`;
const LONG_MINE = `${'ü'.repeat(125)}.txt2`;

type Events = Array<{ id: number; type: string; data: Record<string, unknown> }>;

t.test(
  'syncd pulls a folder from Syncthing: files, directories, empty files, times and permissions',
  { skip },
  async (t) => {
    const dir = t.testdir({
      theirs: {
        'a.txt': 'hello from syncthing\n',
        sub: {
          'b.bin': Buffer.alloc(300_000, 'b'),
          'empty.txt': '',
          deeper: { 'c d é.txt': 'spaces and accents\n' },
        },
        'empty-dir': {},
        // 255 bytes, the most a name may have: its temporary name is its SHA-256, as Syncthing's.
        [LONG_NAME]: 'a long name\n',
      },
      ours: {},
    });
    const [theirs, mine] = [join(dir, 'theirs'), join(dir, 'ours')];
    await writeFile(join(theirs, 'random.bin'), randomBytes(1_000_000));
    // A name written decomposed (NFD): Syncthing indexes it composed (NFC), as syncd does. A symlink.
    await writeFile(join(theirs, 'cafe\u0301.txt'), 'decomposed\n');
    await symlink('sub/b.bin', join(theirs, 'link'));
    await chmod(join(theirs, 'a.txt'), 0o600);
    await mkdir(join(theirs, '.stfolder'));
    const syncthing = await startSyncthing(t);
    const device = await startDevice(t);
    const { syncd, id: myID } = device;
    const status = { myID };
    await shareFolder({
      syncthing,
      device,
      folder: 'pulled',
      theirs,
      mine,
    });
    for (const name of [
      'a.txt',
      'sub/b.bin',
      'sub/empty.txt',
      'sub/deeper/c d é.txt',
      'random.bin',
      LONG_NAME,
    ]) {
      const copy = await pollUntil(`${name} pulled by syncd`, () => readFile(join(mine, name)), 60_000);
      t.ok(copy.equals(await readFile(join(theirs, name))), `${name}: the same bytes`);
      const [ours, original] = [await stat(join(mine, name)), await stat(join(theirs, name))];
      t.ok(Math.abs(ours.mtimeMs - original.mtimeMs) < 1, `${name}: the same modification time`);
      t.equal(ours.mode & 0o777, original.mode & 0o777, `${name}: the same permissions`);
    }
    t.ok((await stat(join(mine, 'empty-dir'))).isDirectory(), 'an empty directory too');
    const nfc = 'café.txt'.normalize('NFC');
    t.equal(await pollUntil('café.txt pulled', () => readFile(join(mine, nfc), 'utf8')), 'decomposed\n');
    t.equal(
      await pollUntil('the symlink pulled', () => readlink(join(mine, 'link'))),
      'sub/b.bin',
      'a symlink',
    );
    const seen = await api<Record<string, { lastSeen: string }>>(syncd, 'GET', '/rest/stats/device');
    t.ok(Date.now() - Date.parse(seen[syncthing.id]?.lastSeen ?? '') < 60_000, 'Syncthing seen just now');
    const folderStats = await api<Record<string, { lastScan: string; lastFile: { filename: string } }>>(
      syncd,
      'GET',
      '/rest/stats/folder',
    );
    t.ok(Date.now() - Date.parse(folderStats.pulled?.lastScan ?? '') < 60_000, 'scanned just now');
    t.not(folderStats.pulled?.lastFile.filename, '', 'the last file pulled is named');
    // Syncthing sees syncd in sync: syncd announced what it pulled, with the versions it pulled.
    const completion = await syncthing.until('syncd complete in Syncthing’s view', async () => {
      const answer = await syncthing.call<{ completion: number; needItems: number }>(
        'GET',
        `/rest/db/completion?folder=pulled&device=${status.myID}`,
      );
      return answer.completion === 100 && answer;
    });
    t.equal(completion.needItems, 0);
    // A rescan finds nothing changed: the pulled files are what the index says.
    const before = await api<Events>(syncd, 'GET', '/rest/events?since=0&timeout=0&events=LocalIndexUpdated');
    await api(syncd, 'POST', '/rest/db/scan?folder=pulled');
    const after = await api<Events>(
      syncd,
      'GET',
      `/rest/events?since=${before.at(-1)?.id ?? 0}&timeout=0&events=LocalIndexUpdated`,
    );
    t.same(after, [], 'no local change after the pull');

    // Changes on Syncthing's side follow: an edit, a rename, a deletion.
    await writeFile(join(theirs, 'a.txt'), 'edited on syncthing\n');
    await rename(join(theirs, 'random.bin'), join(theirs, 'renamed.bin'));
    await rm(join(theirs, 'sub', 'empty.txt'));
    await syncthing.call('POST', '/rest/db/scan?folder=pulled');
    const gone = (path: string) =>
      stat(path).then(
        () => false,
        () => true,
      );
    await pollUntil(
      'the changes pulled',
      async () =>
        (await readFile(join(mine, 'a.txt'), 'utf8')) === 'edited on syncthing\n' &&
        (await gone(join(mine, 'random.bin'))) &&
        (await gone(join(mine, 'sub', 'empty.txt'))) &&
        (await readFile(join(mine, 'renamed.bin')).then(
          () => true,
          () => false,
        )),
      60_000,
    );
    t.ok(
      (await readFile(join(mine, 'renamed.bin'))).equals(await readFile(join(theirs, 'renamed.bin'))),
      'renamed, the same bytes',
    );

    // A reset of syncd's index rebuilds it from the files, which are the global versions already: no
    // conflict, nothing downloaded again, and Syncthing sees syncd complete again.
    await withNewWorker(syncd, () => api(syncd, 'POST', '/rest/system/reset?folder=pulled'));
    await pollUntil(
      'the index rebuilt',
      async () => {
        const answer = await api<{ state: string; localFiles: number }>(
          syncd,
          'GET',
          '/rest/db/status?folder=pulled',
        );
        return answer.state === 'idle' && answer.localFiles === 6;
      },
      60_000,
    );
    await syncthing.until(
      'syncd complete in Syncthing’s view after the reset',
      async () => {
        const answer = await syncthing.call<{ completion: number }>(
          'GET',
          `/rest/db/completion?folder=pulled&device=${status.myID}`,
        );
        return answer.completion === 100;
      },
      60_000,
    );
    const names = await readdir(mine, { recursive: true });
    t.same(
      names.filter((name) => name.includes('sync-conflict')),
      [],
      'no conflict copy',
    );
    t.equal(await readFile(join(mine, 'a.txt'), 'utf8'), 'edited on syncthing\n');
  },
);

t.test(
  'a conflict is settled the same way on both sides, the loser kept as a conflict copy',
  { skip },
  async (t) => {
    const dir = t.testdir({ theirs: { 'x.txt': 'the original\n' }, ours: {} });
    const [theirs, mine] = [join(dir, 'theirs'), join(dir, 'ours')];
    await mkdir(join(theirs, '.stfolder'));
    const syncthing = await startSyncthing(t);
    const device = await startDevice(t);
    const { syncd, id: myID } = device;
    const status = { myID };
    await shareFolder({
      syncthing,
      device,
      folder: 'both',
      theirs,
      mine,
    });
    await pollUntil(
      'x.txt pulled',
      () => readFile(join(mine, 'x.txt'), 'utf8').then((text) => text === 'the original\n'),
      60_000,
    );
    // From syncd: a name written decomposed arrives composed, and a symlink as a symlink.
    await writeFile(join(mine, 'nai\u0308ve.txt'), 'from syncd\n');
    await writeFile(join(mine, LONG_MINE), 'a long name from syncd\n');
    await symlink('x.txt', join(mine, 'to-x'));
    await api(syncd, 'POST', '/rest/db/scan?folder=both');
    await pollUntil(
      'the NFC name and the symlink on Syncthing',
      async () =>
        (await readFile(join(theirs, 'naïve.txt'.normalize('NFC')), 'utf8').catch(() => '')) ===
          'from syncd\n' &&
        (await readlink(join(theirs, 'to-x')).catch(() => '')) === 'x.txt' &&
        (await readFile(join(theirs, LONG_MINE), 'utf8').catch(() => '')) === 'a long name from syncd\n',
      60_000,
    );
    t.same(
      (await readdir(mine)).filter((name) => name.startsWith('na')),
      ['naïve.txt'.normalize('NFC')],
      'renamed to NFC on syncd as well',
    );

    // Apart, each side changes the file its own way; Syncthing's change is the later one.
    const apart = async () => {
      await api(syncd, 'POST', `/rest/system/pause?device=${syncthing.id}`);
      await syncthing.until('apart', async () => {
        const { connections } = await syncthing.call<{
          connections: Record<string, { connected: boolean }>;
        }>('GET', '/rest/system/connections');
        return connections[status.myID]?.connected === false;
      });
    };
    await apart();
    await writeFile(join(mine, 'x.txt'), 'changed on syncd\n');
    await utimes(join(mine, 'x.txt'), 1_800_000_000, 1_800_000_000);
    await api(syncd, 'POST', '/rest/db/scan?folder=both');
    await writeFile(join(theirs, 'x.txt'), 'changed on syncthing\n');
    await utimes(join(theirs, 'x.txt'), 1_800_000_100, 1_800_000_100);
    await syncthing.call('POST', '/rest/db/scan?folder=both');
    await api(syncd, 'POST', `/rest/system/resume?device=${syncthing.id}`);

    // Both end with Syncthing's version (the newer), and syncd's as a conflict copy named, as Syncthing
    // names it, for the device that last changed the winning version: Syncthing (a pull's temporary
    // file, .syncthing.x.sync-conflict-….tmp, is not one yet).
    await settled(t, [mine, theirs], syncthing.id, 'changed on syncthing\n', 'changed on syncd\n');

    // The other way round: syncd's change is the later one, and Syncthing, losing, makes the copy.
    await apart();
    for (const path of [mine, theirs]) {
      for (const name of await readdir(path)) if (name.includes('sync-conflict')) await rm(join(path, name));
    }
    await writeFile(join(theirs, 'x.txt'), 'changed on syncthing again\n');
    await utimes(join(theirs, 'x.txt'), 1_800_000_200, 1_800_000_200);
    await syncthing.call('POST', '/rest/db/scan?folder=both');
    await writeFile(join(mine, 'x.txt'), 'changed on syncd again\n');
    await utimes(join(mine, 'x.txt'), 1_800_000_300, 1_800_000_300);
    await api(syncd, 'POST', '/rest/db/scan?folder=both');
    await api(syncd, 'POST', `/rest/system/resume?device=${syncthing.id}`);
    await settled(t, [theirs, mine], status.myID, 'changed on syncd again\n', 'changed on syncthing again\n');
  },
);

/**
 * Waits until both folders hold `winner` in x.txt and one conflict copy holding `loser`, named for
 * `winnerId`; the first path is the side that lost.
 */
async function settled(t: Test, paths: string[], winnerId: string, winner: string, loser: string) {
  const name = new RegExp(`^x\\.sync-conflict-\\d{8}-\\d{6}-${winnerId.slice(0, 7)}\\.txt$`);
  for (const [i, path] of paths.entries()) {
    const side = i === 0 ? 'the side that lost' : 'the side that won';
    const copies = await pollUntil(
      `the conflict settled on ${side}`,
      async () => {
        const found = (await readdir(path)).filter((entry) => entry.startsWith('x.sync-conflict-'));
        const text = await readFile(join(path, 'x.txt'), 'utf8');
        return found.length === 1 && text === winner && found;
      },
      90_000,
    );
    t.match(copies[0], name, `${side}: the copy is named for the winner's last modifier`);
    t.equal(await readFile(join(path, copies[0] as string), 'utf8'), loser, `${side}: it holds the loser`);
  }
}

t.test(
  'three devices: a file from one syncd reaches another through Syncthing, and back',
  { skip },
  async (t) => {
    const dir = t.testdir({ a: { 'from-a.txt': 'written on the first syncd\n' }, b: {}, hub: {} });
    await mkdir(join(dir, 'hub', '.stfolder'));
    const hub = await startSyncthing(t, 'hub');
    const sides = [];
    for (const name of ['a', 'b']) {
      const { syncd, id: myID, listen } = await startDevice(t);
      const status = { myID };
      sides.push({ name, syncd, id: status.myID, listen, path: join(dir, name) });
    }
    // Each syncd knows only the hub; the hub knows both (first: Syncthing drops unknown devices from a
    // folder), and shares the folder with both.
    for (const side of sides) {
      await hub.call('POST', '/rest/config/devices', { deviceID: side.id, addresses: [side.listen] });
    }
    await hub.call('POST', '/rest/config/folders', {
      id: 'three',
      path: join(dir, 'hub'),
      devices: sides.map((side) => ({ deviceID: side.id })),
    });
    for (const side of sides) {
      await api(side.syncd, 'POST', '/rest/config/devices', { deviceID: hub.id, addresses: [hub.listen] });
      await api(side.syncd, 'POST', '/rest/config/folders', {
        id: 'three',
        path: side.path,
        devices: [{ deviceID: hub.id }],
      });
    }
    const [a, b] = sides as [(typeof sides)[number], (typeof sides)[number]];
    const text = await pollUntil(
      'the first syncd’s file on the second',
      () => readFile(join(b.path, 'from-a.txt'), 'utf8'),
      90_000,
    );
    t.equal(text, 'written on the first syncd\n');
    await writeFile(join(b.path, 'from-b.txt'), 'written on the second syncd\n');
    await api(b.syncd, 'POST', '/rest/db/scan?folder=three');
    const back = await pollUntil(
      'the second syncd’s file on the first',
      () => readFile(join(a.path, 'from-b.txt'), 'utf8'),
      90_000,
    );
    t.equal(back, 'written on the second syncd\n');
    t.equal(
      await readFile(join(dir, 'hub', 'from-b.txt'), 'utf8'),
      'written on the second syncd\n',
      'and on the hub',
    );
  },
);

t.test(
  'a restart and a worker crash in the middle of a large transfer: the pull goes on from its temporary file',
  { skip },
  async (t) => {
    const dir = t.testdir({ theirs: { '.stfolder': {} }, ours: {} });
    const [theirs, mine] = [join(dir, 'theirs'), join(dir, 'ours')];
    const SIZE = 64 * 1024 * 1024;
    const source = createHash('sha256');
    const handle = await open(join(theirs, 'big.bin'), 'w');
    for (let written = 0; written < SIZE; written += 1024 * 1024) {
      const chunk = randomBytes(1024 * 1024);
      source.update(chunk);
      await handle.write(chunk);
    }
    await handle.close();
    const syncthing = await startSyncthing(t);
    // Syncthing sends at 8 MB/s, loopback included: the transfer takes about eight seconds, long
    // enough to be interrupted twice in its middle, even on a loaded machine where a restart is slow.
    await syncthing.call('PATCH', '/rest/config/options', { maxSendKbps: 8000, limitBandwidthInLan: true });
    const device = await startDevice(t);
    const { syncd } = device;
    // DownloadProgress every second (Syncthing's default is five).
    await api(syncd, 'PATCH', '/rest/config/options', { progressUpdateIntervalS: 1 });
    await shareFolder({
      syncthing,
      device,
      folder: 'big',
      theirs,
      mine,
    });
    // What the worker holding the service now has received from Syncthing.
    const received = async () => {
      const { connections } = await api<{ connections: Record<string, { inBytesTotal: number }> }>(
        syncd,
        'GET',
        '/rest/system/connections',
      );
      return connections[syncthing.id]?.inBytesTotal ?? 0;
    };
    await pollUntil('a quarter of the file received', async () => (await received()) > SIZE / 4, 60_000, 10);
    await withNewWorker(syncd, () => api(syncd, 'POST', '/rest/system/restart'));
    // The new worker goes on: its DownloadProgress (from the stream every worker keeps from its start)
    // names the file once a second of its pull has passed.
    const progress = await pollUntil(
      'a DownloadProgress event for big.bin',
      async () => {
        const events = await api<
          Array<{ type: string; data: Record<string, Record<string, { bytesTotal: number }>> }>
        >(syncd, 'GET', '/rest/events?since=0&timeout=0');
        return events.find((event) => event.type === 'DownloadProgress' && event.data.big?.['big.bin']);
      },
      60_000,
    );
    t.equal(progress.data.big?.['big.bin']?.bytesTotal, SIZE, 'DownloadProgress tells the file being pulled');
    await pollUntil('another quarter received', async () => (await received()) > SIZE / 4, 60_000, 10);
    const crashed = await syncd.workerPid();
    process.kill(crashed, 'SIGKILL');
    await pollUntil(
      'a new worker after the crash',
      async () => (await api<{ pid: number }>(syncd, 'GET', '/rest/system/status')).pid !== crashed,
      60_000,
    );
    await pollUntil(
      'big.bin complete',
      async () => (await stat(join(mine, 'big.bin'))).size === SIZE,
      120_000,
    );
    const copy = createHash('sha256')
      .update(await readFile(join(mine, 'big.bin')))
      .digest('hex');
    t.equal(copy, source.digest('hex'), 'the same bytes: nothing lost, nothing garbled');
    const last = await received();
    // Half the file came before, less what was in flight at each interruption (4 MiB at most); without
    // the temporary file's blocks, the last worker would receive the whole file again, and more.
    t.ok(last < SIZE * 0.75, `the last worker received ${last} bytes of ${SIZE}: what was there was reused`);
    t.same(
      (await readdir(mine)).filter((name) => name.endsWith('.tmp')),
      [],
      'no temporary file left',
    );
  },
);
