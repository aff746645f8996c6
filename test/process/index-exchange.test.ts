// The index exchange between syncd and a real Syncthing 1.19 sharing a folder, on loopback: each
// device's index reaches the other (seen through each one's GET /rest/db/file), a reconnection sends
// only what changed (delta indexes), and a local change goes out as an IndexUpdate.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { api, startService } from '../helpers/service.ts';
import { hasSyncthing, NO_SYNCTHING, pollUntil, startSyncthing } from '../helpers/syncthing.ts';

const skip = hasSyncthing ? false : NO_SYNCTHING;

interface FileAnswer {
  global: { name: string; size: number; version: string[]; numBlocks: number; modifiedBy: string };
  local: { name: string; version: string[] };
  availability: Array<{ id: string }> | null;
}
type Events = Array<{ id: number; type: string; data: Record<string, unknown> }>;

t.test('indexes go both ways, in full, then as deltas', { skip }, async (t) => {
  const dir = t.testdir({
    theirs: { 'a.txt': 'hello from syncthing\n', sub: { 'b.bin': 'b'.repeat(300_000) } },
    ours: { 'c.txt': 'hello from syncd\n' },
  });
  const [theirs, mine] = [join(dir, 'theirs'), join(dir, 'ours')];
  const syncthing = await startSyncthing(t);
  const syncd = await startService(t);
  const status = await api<{
    myID: string;
    connectionServiceStatus: Record<string, { lanAddresses: string[] }>;
  }>(syncd, 'GET', '/rest/system/status');
  const listen = Object.values(status.connectionServiceStatus)[0]?.lanAddresses[0] as string;
  await mkdir(join(theirs, '.stfolder'), { recursive: true });
  await syncthing.call('POST', '/rest/config/devices', { deviceID: status.myID, addresses: [listen] });
  await syncthing.call('POST', '/rest/config/folders', {
    id: 'shared',
    path: theirs,
    devices: [{ deviceID: status.myID }],
    // Receive nothing into Syncthing's folder: only the indexes are under test here.
    type: 'sendonly',
  });
  await api(syncd, 'POST', '/rest/config/devices', { deviceID: syncthing.id, addresses: [syncthing.listen] });
  await api(syncd, 'POST', '/rest/config/folders', {
    id: 'shared',
    path: mine,
    devices: [{ deviceID: syncthing.id }],
    // Nothing pulled here either: the indexes alone are under test.
    type: 'sendonly',
  });

  // Syncthing's index in syncd: a.txt with Syncthing's version, available from Syncthing.
  const a = await pollUntil('Syncthing’s a.txt in syncd’s index', () =>
    api<FileAnswer>(syncd, 'GET', '/rest/db/file?folder=shared&file=a.txt'),
  );
  t.match(a.global, { name: 'a.txt', size: 21, numBlocks: 1, modifiedBy: syncthing.id.slice(0, 7) });
  t.same(a.availability, [{ id: syncthing.id, fromTemporary: false }]);
  t.equal(a.local.name, '', 'not here yet');
  const b = await api<FileAnswer>(syncd, 'GET', '/rest/db/file?folder=shared&file=sub/b.bin');
  t.match(b.global, { size: 300_000, numBlocks: 3 });

  // What syncd lacks (its folder is send-only: it keeps lacking it), and what Syncthing lacks.
  const lacking = await pollUntil('syncd’s status counts what it lacks', async () => {
    const answer = await api<Record<string, number>>(syncd, 'GET', '/rest/db/status?folder=shared');
    return answer.needFiles === 2 && answer.localFiles === 1 && answer;
  });
  t.match(lacking, {
    globalFiles: 3,
    globalDirectories: 1,
    localFiles: 1,
    needFiles: 2,
    needDirectories: 1,
    needBytes: 21 + 300_000 + 128,
    needTotalItems: 3,
  });
  const need = await api<{ rest: Array<{ name: string }> }>(syncd, 'GET', '/rest/db/need?folder=shared');
  t.same(need.rest.map((file) => file.name).sort(), ['a.txt', 'sub', 'sub/b.bin']);
  const mineDone = await api<{ completion: number; needItems: number }>(
    syncd,
    'GET',
    '/rest/db/completion?folder=shared',
  );
  t.ok(
    mineDone.completion < 100 && mineDone.needItems === 3,
    `syncd is ${mineDone.completion.toFixed(1)} % complete`,
  );
  const theirsLacking = await pollUntil('what Syncthing lacks', async () => {
    const answer = await api<{ completion: number; needItems: number }>(
      syncd,
      'GET',
      `/rest/db/completion?folder=shared&device=${syncthing.id}`,
    );
    return answer.needItems === 1 && answer;
  });
  t.ok(theirsLacking.completion < 100, 'Syncthing lacks syncd’s c.txt');

  // syncd's index in Syncthing: c.txt with syncd's version, available from syncd.
  const c = await syncthing.until('syncd’s c.txt in Syncthing’s index', () =>
    syncthing.call<FileAnswer>('GET', '/rest/db/file?folder=shared&file=c.txt'),
  );
  t.match(c.global, { name: 'c.txt', size: 17, numBlocks: 1, modifiedBy: status.myID.slice(0, 7) });
  t.match(c.availability, [{ id: status.myID }]);

  // A restart of syncd reconnects; Syncthing has syncd's index at this index ID, so nothing is resent,
  // and Syncthing sends nothing syncd has either.
  const before = await syncthing.call<Events>(
    'GET',
    '/rest/events?since=0&timeout=0&events=RemoteIndexUpdated',
  );
  const lastEvent = before.at(-1)?.id ?? 0;
  const worker = await syncd.workerPid();
  await api(syncd, 'POST', '/rest/system/restart');
  await pollUntil('a new worker holding the service', async () => {
    const answer = await api<{ pid: number; service: { held: boolean } }>(
      syncd,
      'GET',
      '/rest/system/status',
    );
    return answer.pid !== worker && answer.service.held;
  });
  await pollUntil('connected again', async () => {
    const { connections } = await api<{
      connections: Record<string, { connected: boolean; startedAt: string }>;
    }>(syncd, 'GET', '/rest/system/connections');
    return connections[syncthing.id]?.connected;
  });
  await writeFile(join(mine, 'd.txt'), 'a change after the reconnection\n');
  await api(syncd, 'POST', '/rest/db/scan?folder=shared');
  await syncthing.until('syncd’s d.txt in Syncthing’s index', () =>
    syncthing.call<FileAnswer>('GET', '/rest/db/file?folder=shared&file=d.txt'),
  );
  const after = await syncthing.call<Events>(
    'GET',
    `/rest/events?since=${lastEvent}&timeout=0&events=RemoteIndexUpdated`,
  );
  const fromSyncd = after.filter((event) => event.data.device === status.myID);
  t.same(
    fromSyncd.map((event) => event.data.items),
    [1],
    'after the reconnection, only the one change went out (a delta), not the index again',
  );
  // Syncthing sent nothing either: syncd's ClusterConfig told it what syncd had of its index.
  const ours = await api<Events>(syncd, 'GET', '/rest/events?since=0&timeout=0');
  t.same(
    ours.filter((event) => event.type === 'RemoteIndexUpdated'),
    [],
    'the new worker received no index from Syncthing: it had it already',
  );
  // And syncd kept what Syncthing sent before: a.txt is still known without a new Index.
  t.match(await api<FileAnswer>(syncd, 'GET', '/rest/db/file?folder=shared&file=a.txt'), {
    global: { name: 'a.txt' },
  });
});

t.test(
  'Syncthing pulls a folder from syncd: every block served, checked, and the files the same',
  { skip },
  async (t) => {
    const dir = t.testdir({
      ours: {
        'c.txt': 'hello from syncd\n',
        sub: { 'large.bin': Buffer.alloc(700_000, 'z'), 'empty.txt': '' },
      },
      theirs: {},
    });
    const [mine, theirs] = [join(dir, 'ours'), join(dir, 'theirs')];
    // Syncthing syncs only a folder with its marker.
    await mkdir(join(theirs, '.stfolder'));
    // A file of random bytes too, so that no block can stand in for another.
    await writeFile(join(mine, 'random.bin'), randomBytes(400_000));
    const syncthing = await startSyncthing(t);
    const syncd = await startService(t);
    const status = await api<{
      myID: string;
      connectionServiceStatus: Record<string, { lanAddresses: string[] }>;
    }>(syncd, 'GET', '/rest/system/status');
    const listen = Object.values(status.connectionServiceStatus)[0]?.lanAddresses[0] as string;
    await api(syncd, 'POST', '/rest/config/devices', {
      deviceID: syncthing.id,
      addresses: [syncthing.listen],
    });
    await api(syncd, 'POST', '/rest/config/folders', {
      id: 'pushed',
      path: mine,
      devices: [{ deviceID: syncthing.id }],
    });
    await syncthing.call('POST', '/rest/config/devices', { deviceID: status.myID, addresses: [listen] });
    await syncthing.call('POST', '/rest/config/folders', {
      id: 'pushed',
      path: theirs,
      devices: [{ deviceID: status.myID }],
    });
    for (const name of ['c.txt', 'sub/large.bin', 'sub/empty.txt', 'random.bin']) {
      const copy = await syncthing.until(
        `${name} pulled by Syncthing`,
        () => readFile(join(theirs, name)),
        60_000,
      );
      t.ok(copy.equals(await readFile(join(mine, name))), `${name}: the same bytes`);
    }
    const completion = await syncthing.until('Syncthing in sync', async () => {
      const answer = await syncthing.call<{ needItems: number; completion: number }>(
        'GET',
        '/rest/db/completion?folder=pushed',
      );
      return answer.needItems === 0 && answer;
    });
    t.equal(completion.completion, 100);
  },
);

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
      },
      ours: {},
    });
    const [theirs, mine] = [join(dir, 'theirs'), join(dir, 'ours')];
    await writeFile(join(theirs, 'random.bin'), randomBytes(1_000_000));
    await chmod(join(theirs, 'a.txt'), 0o600);
    await mkdir(join(theirs, '.stfolder'));
    const syncthing = await startSyncthing(t);
    const syncd = await startService(t);
    const status = await api<{
      myID: string;
      connectionServiceStatus: Record<string, { lanAddresses: string[] }>;
    }>(syncd, 'GET', '/rest/system/status');
    const listen = Object.values(status.connectionServiceStatus)[0]?.lanAddresses[0] as string;
    await syncthing.call('POST', '/rest/config/devices', { deviceID: status.myID, addresses: [listen] });
    await syncthing.call('POST', '/rest/config/folders', {
      id: 'pulled',
      path: theirs,
      devices: [{ deviceID: status.myID }],
    });
    await api(syncd, 'POST', '/rest/config/devices', {
      deviceID: syncthing.id,
      addresses: [syncthing.listen],
    });
    await api(syncd, 'POST', '/rest/config/folders', {
      id: 'pulled',
      path: mine,
      devices: [{ deviceID: syncthing.id }],
    });
    for (const name of ['a.txt', 'sub/b.bin', 'sub/empty.txt', 'sub/deeper/c d é.txt', 'random.bin']) {
      const copy = await pollUntil(`${name} pulled by syncd`, () => readFile(join(mine, name)), 60_000);
      t.ok(copy.equals(await readFile(join(theirs, name))), `${name}: the same bytes`);
      const [ours, original] = [await stat(join(mine, name)), await stat(join(theirs, name))];
      t.ok(Math.abs(ours.mtimeMs - original.mtimeMs) < 1, `${name}: the same modification time`);
      t.equal(ours.mode & 0o777, original.mode & 0o777, `${name}: the same permissions`);
    }
    t.ok((await stat(join(mine, 'empty-dir'))).isDirectory(), 'an empty directory too');
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
    const worker = await syncd.workerPid();
    await api(syncd, 'POST', '/rest/system/reset?folder=pulled');
    await pollUntil('a new worker holding the service', async () => {
      const answer = await api<{ pid: number; service: { held: boolean } }>(
        syncd,
        'GET',
        '/rest/system/status',
      );
      return answer.pid !== worker && answer.service.held;
    });
    await pollUntil(
      'the index rebuilt',
      async () => {
        const answer = await api<{ state: string; localFiles: number }>(
          syncd,
          'GET',
          '/rest/db/status?folder=pulled',
        );
        return answer.state === 'idle' && answer.localFiles === 4;
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
    const syncd = await startService(t);
    const status = await api<{
      myID: string;
      connectionServiceStatus: Record<string, { lanAddresses: string[] }>;
    }>(syncd, 'GET', '/rest/system/status');
    const listen = Object.values(status.connectionServiceStatus)[0]?.lanAddresses[0] as string;
    await syncthing.call('POST', '/rest/config/devices', { deviceID: status.myID, addresses: [listen] });
    await syncthing.call('POST', '/rest/config/folders', {
      id: 'both',
      path: theirs,
      devices: [{ deviceID: status.myID }],
    });
    await api(syncd, 'POST', '/rest/config/devices', {
      deviceID: syncthing.id,
      addresses: [syncthing.listen],
    });
    await api(syncd, 'POST', '/rest/config/folders', {
      id: 'both',
      path: mine,
      devices: [{ deviceID: syncthing.id }],
    });
    await pollUntil(
      'x.txt pulled',
      () => readFile(join(mine, 'x.txt'), 'utf8').then((text) => text === 'the original\n'),
      60_000,
    );

    // Apart, each side changes the file its own way; Syncthing's change is the later one.
    await api(syncd, 'POST', `/rest/system/pause?device=${syncthing.id}`);
    await syncthing.until('apart', async () => {
      const { connections } = await syncthing.call<{ connections: Record<string, { connected: boolean }> }>(
        'GET',
        '/rest/system/connections',
      );
      return connections[status.myID]?.connected === false;
    });
    await writeFile(join(mine, 'x.txt'), 'changed on syncd\n');
    await utimes(join(mine, 'x.txt'), 1_800_000_000, 1_800_000_000);
    await api(syncd, 'POST', '/rest/db/scan?folder=both');
    await writeFile(join(theirs, 'x.txt'), 'changed on syncthing\n');
    await utimes(join(theirs, 'x.txt'), 1_800_000_100, 1_800_000_100);
    await syncthing.call('POST', '/rest/db/scan?folder=both');
    await api(syncd, 'POST', `/rest/system/resume?device=${syncthing.id}`);

    // Both end with Syncthing's version (the newer), and syncd's as a conflict copy named for syncd (a
    // pull's temporary file, .syncthing.x.sync-conflict-….tmp, is not one yet).
    const copyOf = async (path: string) =>
      (await readdir(path)).filter((name) => name.startsWith('x.sync-conflict-'));
    const conflictName = new RegExp(`^x\\.sync-conflict-\\d{8}-\\d{6}-${status.myID.slice(0, 7)}\\.txt$`);
    for (const [side, path] of [
      ['syncd', mine],
      ['Syncthing', theirs],
    ] as const) {
      const copies = await pollUntil(
        `the conflict settled on ${side}`,
        async () => {
          const found = await copyOf(path);
          const text = await readFile(join(path, 'x.txt'), 'utf8');
          return found.length === 1 && text === 'changed on syncthing\n' && found;
        },
        90_000,
      );
      t.match(copies[0], conflictName, `${side}: the conflict copy is named for the device that lost`);
      t.equal(
        await readFile(join(path, copies[0] as string), 'utf8'),
        'changed on syncd\n',
        `${side}: it holds the loser`,
      );
    }
  },
);

t.test(
  'three devices: a file from one syncd reaches another through Syncthing, and back',
  { skip },
  async (t) => {
    const dir = t.testdir({ a: { 'from-a.txt': 'written on the first syncd\n' }, b: {}, hub: {} });
    await mkdir(join(dir, 'hub', '.stfolder'));
    const hub = await startSyncthing(t, 'hub');
    const sides = [];
    for (const name of ['a', 'b']) {
      const syncd = await startService(t);
      const status = await api<{
        myID: string;
        connectionServiceStatus: Record<string, { lanAddresses: string[] }>;
      }>(syncd, 'GET', '/rest/system/status');
      const listen = Object.values(status.connectionServiceStatus)[0]?.lanAddresses[0] as string;
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
