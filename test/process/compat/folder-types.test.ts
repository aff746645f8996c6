// Folder types against a real Syncthing 1.19, on loopback: a receive-only folder on syncd keeps its
// own changes to itself until a revert gives them up, and a send-only folder on syncd ignores
// Syncthing's changes until an override puts its own versions back on Syncthing.
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { api, startDevice } from '../../helpers/service.ts';
import {
  hasSyncthing,
  NO_SYNCTHING,
  pollUntil,
  shareFolder,
  startSyncthing,
} from '../../helpers/syncthing.ts';

const skip = hasSyncthing ? false : NO_SYNCTHING;
type Status = { needFiles: number; receiveOnlyChangedFiles: number; sequence: number; state: string };

t.test('receive-only and send-only folders on syncd, with revert and override', { skip }, async (t) => {
  const dir = t.testdir({
    theirsRo: { '.stfolder': {}, 'a.txt': 'from syncthing\n' },
    mineRo: {},
    theirsSo: { '.stfolder': {} },
    mineSo: { 's.txt': 'from syncd\n' },
    offered: { '.stfolder': {} },
  });
  const path = (name: string, ...rest: string[]) => join(dir, name, ...rest);
  const syncthing = await startSyncthing(t);
  const device = await startDevice(t);
  const { syncd, id } = device;
  await shareFolder({
    syncthing,
    device,
    folder: 'ro',
    theirs: path('theirsRo'),
    mine: path('mineRo'),
    myType: 'receiveonly',
  });
  await shareFolder({
    syncthing,
    device,
    folder: 'so',
    theirs: path('theirsSo'),
    mine: path('mineSo'),
    myType: 'sendonly',
  });
  const text = (file: string) => readFile(file, 'utf8').catch(() => undefined);
  await pollUntil(
    'a.txt received',
    async () => (await text(path('mineRo', 'a.txt'))) === 'from syncthing\n',
    60_000,
  );
  await pollUntil(
    's.txt sent',
    async () => (await text(path('theirsSo', 's.txt'))) === 'from syncd\n',
    60_000,
  );

  // Receive-only: an edit and an addition on syncd stay there.
  await writeFile(path('mineRo', 'a.txt'), 'edited on syncd\n');
  await writeFile(path('mineRo', 'extra.txt'), 'added on syncd\n');
  await api(syncd, 'POST', '/rest/db/scan?folder=ro');
  const ro = await api<Status>(syncd, 'GET', '/rest/db/status?folder=ro');
  t.equal(ro.receiveOnlyChangedFiles, 2, 'both counted as changes kept here');
  t.equal(ro.needFiles, 0, 'and nothing needed for them');
  const changed = await api<{ files: Array<{ name: string }> }>(
    syncd,
    'GET',
    '/rest/db/localchanged?folder=ro',
  );
  t.same(changed.files.map((file) => file.name).sort(), ['a.txt', 'extra.txt']);
  // Syncthing has seen syncd's index up to that sequence, and takes nothing of it.
  await syncthing.until('Syncthing has syncd’s index of ro', async () => {
    const answer = await syncthing.call<{ sequence: number }>(
      'GET',
      `/rest/db/completion?folder=ro&device=${id}`,
    );
    return answer.sequence >= ro.sequence;
  });
  t.equal(await text(path('theirsRo', 'a.txt')), 'from syncthing\n', 'Syncthing keeps its a.txt');
  t.equal(await text(path('theirsRo', 'extra.txt')), undefined, 'and never gets extra.txt');
  const extra = await syncthing.call<{ global: { invalid: boolean } }>(
    'GET',
    '/rest/db/file?folder=ro&file=extra.txt',
  );
  t.equal(extra.global.invalid, true, 'which Syncthing knows of only as invalid');
  // A revert gives both up: a.txt comes back, extra.txt goes, no conflict copy.
  await api(syncd, 'POST', '/rest/db/revert?folder=ro');
  await pollUntil(
    'the revert pulled a.txt back',
    async () => (await text(path('mineRo', 'a.txt'))) === 'from syncthing\n',
    60_000,
  );
  await t.rejects(stat(path('mineRo', 'extra.txt')), { code: 'ENOENT' }, 'the addition deleted');
  t.same(
    (await readdir(path('mineRo'))).filter((name) => name.includes('sync-conflict')),
    [],
  );
  await pollUntil('nothing kept after the revert', async () => {
    const after = await api<Status>(syncd, 'GET', '/rest/db/status?folder=ro');
    return after.receiveOnlyChangedFiles === 0 && after.state === 'idle';
  });

  // Send-only: Syncthing's edit is not taken; an override puts syncd's version back on Syncthing.
  await writeFile(path('theirsSo', 's.txt'), 'edited on syncthing\n');
  await syncthing.call('POST', '/rest/db/scan?folder=so');
  await pollUntil(
    'syncd knows it needs Syncthing’s edit',
    async () => {
      const so = await api<Status>(syncd, 'GET', '/rest/db/status?folder=so');
      return so.needFiles === 1;
    },
    60_000,
  );
  t.equal(await text(path('mineSo', 's.txt')), 'from syncd\n', 'a send-only folder does not pull it');
  const refused = await fetch(`${syncd.url}/rest/db/override?folder=ro`, {
    method: 'POST',
    headers: { 'X-API-Key': syncd.apiKey },
  });
  t.equal(refused.status, 409, 'an override of a receive-only folder is refused');
  t.match(await refused.json(), { code: 'SYNCD_ERR_FOLDER_TYPE', message: /sendonly folders only/ });
  type Completion = { id: number; data: { folder: string; device: string; completion: number } };
  const completions = (since: number) =>
    api<Completion[]>(syncd, 'GET', `/rest/events?since=${since}&timeout=0&events=FolderCompletion`);
  const before = (await completions(0)).at(-1)?.id ?? 0;
  await api(syncd, 'POST', '/rest/db/override?folder=so');
  await pollUntil(
    'Syncthing got syncd’s version back',
    async () => (await text(path('theirsSo', 's.txt'))) === 'from syncd\n',
    60_000,
  );
  const so = await api<Status>(syncd, 'GET', '/rest/db/status?folder=so');
  t.equal(so.needFiles, 0, 'nothing needed after the override');
  // Syncthing's index of the override came back: syncd tells Syncthing's completion, 100 % again.
  const after = await completions(before);
  t.ok(
    after.some(({ data }) => data.folder === 'so' && data.device === syncthing.id && data.completion < 100),
    'Syncthing lacked the override at first',
  );
  const completion = await pollUntil('FolderCompletion of Syncthing at 100 %', async () => {
    const events = await completions(before);
    return events.find(
      ({ data }) => data.folder === 'so' && data.device === syncthing.id && data.completion === 100,
    );
  });
  t.match(completion.data, { needItems: 0, needBytes: 0, globalItems: Number, sequence: Number });

  // A folder Syncthing offers that syncd does not share is pending, until syncd shares it.
  type Pending = Record<string, { offeredBy: Record<string, { label: string; time: string }> }>;
  await syncthing.call('POST', '/rest/config/folders', {
    id: 'offered',
    label: 'Offered',
    path: path('offered'),
    devices: [{ deviceID: id }],
  });
  const pending = await pollUntil('the offered folder pending on syncd', async () => {
    const answer = await api<Pending>(syncd, 'GET', '/rest/cluster/pending/folders');
    return answer.offered && answer;
  });
  t.equal(pending.offered?.offeredBy[syncthing.id]?.label, 'Offered', 'offered by Syncthing, with its label');
  await api(syncd, 'POST', '/rest/config/folders', {
    id: 'offered',
    path: path('offeredMine'),
    devices: [{ deviceID: syncthing.id }],
  });
  t.same(await api<Pending>(syncd, 'GET', '/rest/cluster/pending/folders'), {}, 'shared now: not pending');
});
