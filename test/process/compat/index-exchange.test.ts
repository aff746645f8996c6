// The index exchange between syncd and a real Syncthing 1.19 sharing a folder, on loopback: each
// device's index reaches the other (seen through each one's GET /rest/db/file), a reconnection sends
// only what changed (delta indexes), and a local change goes out as an IndexUpdate.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { api, startDevice, withNewWorker } from '../../helpers/service.ts';
import { hasSyncthing, NO_SYNCTHING, pollUntil, startSyncthing } from '../../helpers/syncthing.ts';

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
  const { syncd, id: myID, listen } = await startDevice(t);
  const status = { myID };
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
  await withNewWorker(syncd, () => api(syncd, 'POST', '/rest/system/restart'));
  await pollUntil('connected again', async () => {
    const { connections } = await api<{
      connections: Record<string, { connected: boolean; startedAt: string }>;
    }>(syncd, 'GET', '/rest/system/connections');
    return connections[syncthing.id]?.connected;
  });
  // The new worker's first scan over before d.txt is written: one still walking the folder on a busy
  // machine would find d.txt empty, as writeFile creates it, and send that first.
  await api(syncd, 'POST', '/rest/db/scan?folder=shared');
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
    const { syncd, id: myID, listen } = await startDevice(t);
    const status = { myID };
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
