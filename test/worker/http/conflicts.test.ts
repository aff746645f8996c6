// syncd's own GET /rest/syncd/conflicts, in-process over a real service: a folder's conflict copies
// from its index, by the file each is a copy of, bounded.
import { mkdir, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { buildApp } from '../../../worker/http/app.ts';
import { MAX_CONFLICT_COPIES } from '../../../worker/http/routes/db.ts';
import { EventLog } from '../../../worker/events/event-log.ts';
import { conflictName, conflictOrigin } from '../../../worker/sync/conflicts.ts';
import { shortIdOf } from '../../../shared/device-id.ts';
import { appOptions, injector } from '../../helpers/app.ts';
import { localConfig, testConfiguration } from '../../helpers/config.ts';
import { heldService } from '../../helpers/held-service.ts';

const OTHER = 'MFZWI3D-BONSGYC-YLTMRWG-C43ENR5-QXGZDMM-FZWI3DP-BONSGYY-LTMRWAD';
const WHEN = new Date(2026, 2, 14, 9, 5, 7);

async function setup(t: Test, tree: NonNullable<Parameters<Test['testdir']>[0]>) {
  const home = t.testdir({ data: tree });
  const data = join(home, 'data');
  const local = localConfig(testConfiguration({ folders: [{ id: 'f', label: 'F', path: data }] }));
  const events = new EventLog();
  const { service } = await heldService(t, home, local.config, events);
  const app = buildApp(appOptions({ config: local.config, events, model: () => service.model }));
  await app.ready();
  t.teardown(() => app.close());
  const call = injector(app);
  await call('POST', '/rest/db/scan?folder=f');
  return { data, call, model: service.model };
}

t.test('the copies beside their originals, with size, time and the device in their names', async (t) => {
  const copy = conflictName('notes/plan.txt', shortIdOf(OTHER), WHEN);
  const older = conflictName('notes/plan.txt', shortIdOf(OTHER), new Date(2026, 0, 2, 3, 4, 5));
  const gone = conflictName('gone.md', shortIdOf(OTHER), WHEN);
  t.equal(copy, 'notes/plan.sync-conflict-20260314-090507-MFZWI3D.txt');
  const { data, call } = await setup(t, {
    notes: {
      'plan.txt': 'the winner',
      'plan.sync-conflict-20260314-090507-MFZWI3D.txt': 'the loser, longer',
      [older.slice('notes/'.length)]: 'older',
      // The marker in a name that Syncthing did not make: not a copy.
      'plan.sync-conflict-draft.txt': 'mine',
    },
    [gone]: 'its original was deleted',
    // A copy from a Syncthing that did not name the device yet.
    'Makefile.sync-conflict-20200101-000000': 'all:',
    Makefile: 'all: build',
    'dir.sync-conflict-20260314-090507-MFZWI3D': { inside: 'x' },
  });
  const stamp = new Date(Date.UTC(2026, 1, 1, 12, 0, 0));
  await utimes(join(data, copy), stamp, stamp);
  await call('POST', '/rest/db/scan?folder=f');

  const response = await call('GET', '/rest/syncd/conflicts?folder=f');
  t.equal(response.status, 200);
  const answer = response.json();
  t.equal(answer.truncated, false);
  const byOriginal = Object.fromEntries(
    answer.conflicts.map((entry: { original: string }) => [entry.original, entry]),
  );
  t.same(Object.keys(byOriginal).sort(), ['Makefile', 'gone.md', 'notes/plan.txt']);
  t.match(byOriginal['notes/plan.txt'], {
    current: { size: 10, modified: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/ },
    copies: [
      { name: older, size: 5, device: 'MFZWI3D' },
      { name: copy, size: 17, modified: '2026-02-01T12:00:00Z', device: 'MFZWI3D' },
    ],
  });
  t.equal(byOriginal['notes/plan.txt'].copies.length, 2, 'the draft is not a copy');
  t.same(byOriginal['gone.md'].current, null, 'an original that is gone');
  t.match(byOriginal.Makefile.copies, [{ name: 'Makefile.sync-conflict-20200101-000000', device: '' }]);
  t.notOk(
    JSON.stringify(answer).includes('dir.sync-conflict'),
    'a directory with the marker is no copy, nor is what it holds',
  );

  // A copy deleted is gone from the index, and from the list, at the next scan.
  await rm(join(data, gone));
  await call('POST', '/rest/db/scan?folder=f');
  const after = (await call('GET', '/rest/syncd/conflicts?folder=f')).json();
  t.notOk(
    after.conflicts.some((entry: { original: string }) => entry.original === 'gone.md'),
    'the deleted copy',
  );
});

t.test('a folder with no copies, and unknown folders', async (t) => {
  const { call } = await setup(t, { 'a.txt': 'a' });
  t.same((await call('GET', '/rest/syncd/conflicts?folder=f')).json(), { conflicts: [], truncated: false });
  const unknown = await call('GET', '/rest/syncd/conflicts?folder=nope');
  t.equal(unknown.status, 404);
  t.match(unknown.json(), { code: 'SYNCD_ERR_NOT_FOUND', message: 'no such folder: "nope"' });
  t.equal((await call('GET', '/rest/syncd/conflicts')).status, 404, 'no folder given');
});

t.test(`at most a bound of copies in an answer (${MAX_CONFLICT_COPIES} for the route)`, async (t) => {
  const { data, call, model } = await setup(t, { 'a.txt': 'a' });
  await mkdir(join(data, 'many'));
  const stamps = Array.from({ length: 12 }, (_, i) => new Date(2026, 0, 1, 0, 0, i));
  for (const stamp of stamps) await writeFile(join(data, conflictName('many/x.bin', 1n << 40n, stamp)), '');
  await call('POST', '/rest/db/scan?folder=f');
  // The bound's logic at a smaller bound than the route's, which would take a thousand files.
  const bounded = model.conflicts('f', 10);
  t.equal(bounded.truncated, true);
  t.equal(bounded.conflicts.length, 1);
  t.equal(bounded.conflicts[0]?.copies.length, 10);
  const answer = (await call('GET', '/rest/syncd/conflicts?folder=f')).json();
  t.same([answer.truncated, answer.conflicts[0].copies.length], [false, 12], 'under the route’s bound, all');
});

t.test('what a conflict copy’s name tells', async (t) => {
  t.same(conflictOrigin('a/b.tar.sync-conflict-20260314-090507-MFZWI3D.gz'), {
    original: 'a/b.tar.gz',
    stamp: '20260314-090507',
    device: 'MFZWI3D',
  });
  // Go's filepath.Ext takes a name that begins with its only dot whole.
  t.same(conflictOrigin('.sync-conflict-20260314-090507-MFZWI3D.bashrc'), {
    original: '.bashrc',
    stamp: '20260314-090507',
    device: 'MFZWI3D',
  });
  t.equal(conflictOrigin('a.sync-conflict-x.txt'), undefined);
  t.equal(conflictOrigin('plain.txt'), undefined);
  for (const name of ['x.txt', 'dir/Makefile', 'd.e/f.g.h', 'dir/.bashrc'])
    t.equal(conflictOrigin(conflictName(name, shortIdOf(OTHER), WHEN))?.original, name, name);
});
