// options.maxFolderConcurrency as Syncthing 1.19 has it: one limiter for all folders, whose scans, pulls
// and versions' cleanouts wait their turn in scan-waiting, sync-waiting and clean-waiting; in process,
// with real folders, index and hashing threads, the test taking turns itself to hold the folders back.
import { writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { Configuration } from '../../../shared/config/defaults.ts';
import { EventLog, type SyncdEvent } from '../../../worker/events/event-log.ts';
import { folderSummary } from '../../../worker/folders/folder-summary.ts';
import { Folders } from '../../../worker/folders/folders.ts';
import type { FolderRunnerOptions } from '../../../worker/folders/folder-runner.ts';
import { folderConcurrency, IoLimiter } from '../../../worker/folders/io-limiter.ts';
import { IndexDb } from '../../../worker/index-db/index-db.ts';
import { HasherPool } from '../../../worker/scanner/hasher-pool.ts';
import { silentLogger } from '../../helpers/app.ts';
import { localConfig, testConfiguration } from '../../helpers/config.ts';
import '../../helpers/teardown-first.ts';

t.test('maxFolderConcurrency is read as Syncthing reads it', async (t) => {
  t.equal(folderConcurrency(2), 2, 'a positive number as it is');
  t.equal(folderConcurrency(-1), 0, 'a negative one: no limit');
  t.equal(folderConcurrency(0), availableParallelism(), '0: the number of CPUs');
});

t.test('turns go in order, a capacity of 0 is no limit, and a waiter can give up', async (t) => {
  const limiter = new IoLimiter(1);
  const first = await limiter.take();
  const order: string[] = [];
  const second = limiter.take().then((give) => (order.push('second'), give));
  const stop = new AbortController();
  const given = limiter.take(stop.signal);
  const third = limiter.take().then((give) => (order.push('third'), give));
  t.equal(limiter.waiting, 3);
  stop.abort(new Error('stopping'));
  await t.rejects(given, /stopping/, 'an abort ends the wait');
  t.equal(limiter.waiting, 2, 'and leaves the line');
  first();
  first();
  const giveSecond = await second;
  t.same(order, ['second'], 'one turn given back lets one in, however often it is given');
  giveSecond();
  (await third)();
  t.same(order, ['second', 'third']);
  limiter.capacity = 0;
  const all = await Promise.all([limiter.take(), limiter.take(), limiter.take()]);
  t.equal(limiter.held, 3, 'no limit at 0');
  limiter.capacity = 1;
  let late = false;
  const waits = limiter.take().then((give) => ((late = true), give));
  all[0]?.();
  all[1]?.();
  await new Promise((resolve) => setImmediate(resolve));
  t.notOk(late, 'a smaller capacity lets no one in while as many hold turns');
  all[2]?.();
  (await waits)();
  t.equal(limiter.held, 0);
});

t.test('folders take turns of one limiter', async (t) => {
  // One hashing thread for these tests: a thread's start costs more than their scans.
  const hasher = new HasherPool(1);
  t.teardown(() => hasher.close());

  t.test('with maxFolderConcurrency 1, one folder scans while the other waits in scan-waiting', async (t) => {
    const { folders, events, db, config } = await twoFolders(t, hasher, 1);
    const held = await folders.limiter.take();
    folders.start();
    await until(() => folders.limiter.waiting === 2);
    const [a, b] = [folders.get('a'), folders.get('b')];
    t.same([a?.state, b?.state], ['scan-waiting', 'scan-waiting'], 'both wait while the test holds the turn');
    t.equal(a && folderSummary(a, db).state, 'scan-waiting', '/rest/db/status says so');
    held();
    await Promise.all([until(() => scanned(events, 'a')), until(() => scanned(events, 'b'))]);
    const changes = await states(events);
    const [first, second] =
      changes.find((e) => e.to === 'scanning')?.folder === 'a' ? ['a', 'b'] : ['b', 'a'];
    t.same(
      changes.filter((e) => e.from === 'scanning' || e.to === 'scanning').map((e) => `${e.folder}:${e.to}`),
      [`${first}:scanning`, `${first}:idle`, `${second}:scanning`, `${second}:idle`],
      'one scan after the other',
    );

    // A live change: with the test holding the only turn, both scans go on once there is no limit.
    const again = await folders.limiter.take();
    const rescans = [a?.scan(), b?.scan()];
    await until(() => folders.limiter.waiting === 2);
    await config.change((draft) => {
      draft.options.maxFolderConcurrency = -1;
    });
    t.equal(folders.limiter.capacity, 0, 'the limiter has the new capacity');
    let scannedBoth = false;
    void Promise.all(rescans).then(() => (scannedBoth = true));
    await until(() => scannedBoth);
    t.pass('both scanned while the test still held its turn');
    again();
  });

  t.test('a folder stopped while it waits or scans stops without an error', async (t) => {
    const { folders, config } = await twoFolders(t, hasher, 1);
    const path = config.current.folders.find((folder) => folder.id === 'a')!.path;
    await Promise.all(Array.from({ length: 500 }, (_, i) => writeFile(join(path, `f${i}.txt`), `file ${i}`)));
    folders.start();
    await until(() => folders.get('a')?.state === 'scanning' || folders.get('b')?.state === 'scanning');
    const a = folders.get('a')!;
    // The scan under way and the other folder's wait end with an AbortError: a stop asked for must not
    // turn them into failures.
    await t.resolves(a.stop(), 'stopped while scanning');
    await t.resolves(folders.get('b')!.stop(), 'stopped while waiting');
  });

  t.test('a folder paused while it waits for its turn does not scan', async (t) => {
    const { folders, events, config } = await twoFolders(t, hasher, 1);
    const held = await folders.limiter.take();
    folders.start();
    await until(() => folders.limiter.waiting === 2);
    await config.change((draft) => {
      const a = draft.folders.find((folder) => folder.id === 'a');
      if (a) a.paused = true;
    });
    t.equal(folders.get('a')?.state, 'paused');
    held();
    await until(() => scanned(events, 'b'));
    await until(() => folders.limiter.held === 0 && folders.limiter.waiting === 0);
    t.equal(folders.get('a')?.state, 'paused', 'still paused');
    t.notOk(
      (await states(events)).some((e) => e.folder === 'a' && e.to === 'scanning'),
      'and never scanned',
    );
  });

  t.test('a folder whose pull waits for a turn is in sync-waiting', async (t) => {
    const started: string[] = [];
    const ends: Record<string, () => void> = {};
    // A pull that lasts until the test ends it, or the folder stops.
    const { folders, events, db } = await twoFolders(t, hasher, 1, (folder, signal) => {
      started.push(folder.id);
      return new Promise((resolve) => {
        ends[folder.id] = () => resolve({ pulled: 0, problems: [], toScan: [] });
        signal.addEventListener('abort', () => ends[folder.id]?.());
      });
    });
    folders.start();
    const [a, b] = [folders.get('a'), folders.get('b')];
    await Promise.all([a?.scan(), b?.scan()]);
    a?.pullSoon();
    await until(() => started.length === 1);
    b?.pullSoon();
    await until(() => folders.limiter.waiting === 1);
    t.same([a?.state, b?.state], ['syncing', 'sync-waiting'], 'b waits while a pulls');
    t.equal(b && folderSummary(b, db).state, 'sync-waiting', '/rest/db/status says so');
    t.same(started, ['a'], 'b has not begun');
    ends.a?.();
    await until(() => started.length === 2);
    t.equal(b?.state, 'syncing', "b pulls once a's turn is given back");
    ends.b?.();
    await until(() => b?.state === 'idle');
    t.same(
      (await states(events))
        .filter((e) => e.folder === 'b')
        .slice(-3)
        .map((e) => e.to),
      ['sync-waiting', 'syncing', 'idle'],
      'StateChanged tells the wait',
    );
  });

  t.test("a folder's versions' cleanout waits for a turn in clean-waiting", async (t) => {
    const { folders } = await twoFolders(t, hasher, 1, undefined, {
      type: 'trashcan',
      cleanupIntervalS: 1,
      params: { cleanoutDays: '1' },
    });
    folders.start();
    const [a, b] = [folders.get('a'), folders.get('b')];
    await Promise.all([a?.scan(), b?.scan()]);
    const held = await folders.limiter.take();
    await until(() => a?.state === 'clean-waiting' && b?.state === 'clean-waiting', 10_000);
    t.equal(folders.limiter.waiting, 2, 'both wait for the turn the test holds');
    held();
    await until(() => a?.state === 'idle' && b?.state === 'idle');
    t.equal(folders.limiter.held, 0, 'the cleanouts gave their turns back');
  });
});

interface StateChange {
  folder: string;
  from: string;
  to: string;
}

// Two folders, a and b, of an index of their own, with the limiter set to `limit`.
async function twoFolders(
  t: Test,
  hasher: HasherPool,
  limit: number,
  pull?: FolderRunnerOptions['pull'],
  versioning?: Partial<Configuration['folders'][number]['versioning']>,
) {
  const dir = t.testdir({ a: { '.stfolder': {}, 'x.txt': 'x' }, b: { '.stfolder': {}, 'y.txt': 'y' } });
  const db = await IndexDb.open(join(dir, 'index.sqlite'));
  const folder = (id: string) => ({
    id,
    path: join(dir, id),
    rescanIntervalS: 0,
    fsWatcherEnabled: false,
    ...(versioning ? { versioning } : {}),
  });
  const { config } = localConfig(
    testConfiguration({ options: { maxFolderConcurrency: limit }, folders: [folder('a'), folder('b')] }),
  );
  const events = new EventLog();
  const folders = new Folders({ config, db, hasher, events, shortId: 7n, logger: silentLogger(), pull });
  t.teardown(async () => {
    await folders.stop();
    db.close();
  });
  return { folders, events, db, config };
}

// The StateChanged events so far, from the default subscription, which keeps them from the start.
async function states(events: EventLog): Promise<StateChange[]> {
  return (await events.subscription(EventLog.defaultTypes).since(0, 0))
    .filter((event: SyncdEvent) => event.type === 'StateChanged')
    .map((event) => event.data as StateChange);
}

async function scanned(events: EventLog, folder: string): Promise<boolean> {
  return (await states(events)).some((e) => e.folder === folder && e.from === 'scanning');
}

async function until(done: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
