import { readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { BlockRequest } from '../../../worker/bep/block-request.ts';
import { EventLog } from '../../../worker/events/event-log.ts';
import type { FileRecord } from '../../../worker/records/file-record.ts';
import { IndexDb } from '../../../worker/index-db/index-db.ts';
import { HasherPool } from '../../../worker/scanner/hasher-pool.ts';
import { BlockWriter } from '../../../worker/sync/block-writer.ts';
import { scanFolder } from '../../../worker/folders/scan-folder.ts';
import type { NeededItem } from '../../../worker/index-db/global.ts';
import { inPullOrder, type PullOrder, pullFolder } from '../../../worker/sync/pull-folder.ts';
import { recordingLogger } from '../../helpers/app.ts';
import { MAX_PRIORITY_NAMES, PullPriority } from '../../../worker/sync/pull-priority.ts';

// Name, size, modification time (s): no two orders agree, so each order shows which one it followed.
const FILES: Array<[string, number, number]> = [
  ['a', 300, 1_700_000_300],
  ['b', 100, 1_700_000_100],
  ['c', 400, 1_700_000_200],
  ['d', 200, 1_700_000_400],
];

const item = ([name, size, modifiedS]: [string, number, number]) =>
  ({
    name,
    global: { name, size, modifiedS, modifiedNs: 0 },
    own: undefined,
    holders: [],
  }) as unknown as NeededItem;
const names = (items: NeededItem[]) => items.map((entry) => entry.name).join('');

t.test("each of Syncthing's orders, from a list sorted by name", async (t) => {
  const expected: Record<Exclude<PullOrder, 'random'>, string> = {
    alphabetic: 'abcd',
    smallestFirst: 'bdac',
    largestFirst: 'cadb',
    oldestFirst: 'bcad',
    newestFirst: 'dacb',
  };
  for (const [order, want] of Object.entries(expected)) {
    t.equal(names(inPullOrder(FILES.map(item), order as PullOrder)), want, order);
  }
  const orders = new Set<string>();
  for (let round = 0; round < 200; round++) {
    const shuffled = names(inPullOrder(FILES.map(item), 'random'));
    t.equal([...shuffled].sort().join(''), 'abcd', 'random: every file once');
    orders.add(shuffled);
  }
  // 24 orders are possible; 200 rounds missing more than half of them would be a broken shuffle.
  t.ok(orders.size > 12, `random: ${orders.size} different orders in 200 rounds`);
  t.end();
});

t.test('PullPriority: newest first, each name once, bounded', async (t) => {
  const priority = new PullPriority();
  for (const name of ['a', 'b', 'a']) priority.bringToFront(name);
  t.same(priority.names(), ['a', 'b']);
  t.equal(
    priority.take((name) => name === 'b'),
    'b',
  );
  t.equal(
    priority.take(() => false),
    undefined,
  );
  for (let i = 0; i < MAX_PRIORITY_NAMES + 10; i++) priority.bringToFront(`n${i}`);
  t.equal(priority.names().length, MAX_PRIORITY_NAMES);
  t.equal(priority.names()[0], `n${MAX_PRIORITY_NAMES + 9}`);
});

t.test("a pull takes its files in the folder's order", async (t) => {
  const dir = t.testdir({
    source: { '.stfolder': {} },
    one: { '.stfolder': {} },
    two: { '.stfolder': {} },
    three: { '.stfolder': {} },
  });
  const source = join(dir, 'source');
  for (const [name, size, modifiedS] of FILES) {
    await writeFile(join(source, name), Buffer.alloc(size, name));
    await utimes(join(source, name), modifiedS, modifiedS);
  }
  const sourceDb = await IndexDb.open(join(dir, 'source.sqlite'));
  const hasher = new HasherPool(1);
  const writer = new BlockWriter();
  const dbs: IndexDb[] = [];
  t.teardown(async () => {
    await hasher.close();
    await writer.close();
    sourceDb.close();
    for (const db of dbs) db.close();
  });
  const folder = { id: 'f', path: source, markerName: '.stfolder', ignorePerms: false, modTimeWindowS: 0 };
  await scanFolder({ folder, db: sourceDb, hasher, shortId: 7n });
  const records = FILES.map(([name]) => sourceDb.file('f', name) as FileRecord);
  const started = async (order: PullOrder, into: string, priority?: PullPriority) => {
    const db = await IndexDb.open(join(dir, `${into}.sqlite`));
    dbs.push(db);
    db.putRemote('f', 'PEER', records, true);
    const events = new EventLog();
    const seen = events.subscription(['ItemStarted']);
    const result = await pullFolder({
      folder: { id: 'f', path: join(dir, into), ignorePerms: false, order, priority },
      db,
      connected: () => new Set(['PEER']),
      request: async (_device: string, block: BlockRequest) => {
        const name = records.find((record) => record.blocks.some((b) => b.hash.equals(block.hash)))?.name;
        return readFile(join(source, name as string));
      },
      writer,
      recorded: () => {},
      events,
      logger: recordingLogger().logger,
    });
    t.same(result.problems, [], `${order}: every file pulled`);
    const items = (await seen.since(0, 0)).map((event) => (event.data as { item: string }).item);
    return items.join('');
  };
  t.equal(await started('largestFirst', 'one'), 'cadb', 'largestFirst: the largest first');
  t.equal(await started('newestFirst', 'two'), 'dacb', 'newestFirst: the newest first');
  // POST /rest/db/prio: the latest asked first, then the rest in the folder's order.
  const priority = new PullPriority();
  for (const name of ['d', 'nonesuch', 'b']) priority.bringToFront(name);
  t.equal(await started('alphabetic', 'three', priority), 'bdac', 'the files asked for first');
  t.same(priority.names(), [], 'each taken once; a name not needed is forgotten, as Syncthing does');
});
