import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { staggeredToRemove } from '../../../worker/versioning/staggered.ts';
import { parseTag } from '../../../worker/versioning/tags.ts';
import { inTimeZone } from '../../helpers/time-zone.ts';
import { local, setMtime, versionedFolder } from './folder.ts';

// staggered_test.go TestStaggeredVersioningVersionCount: its names, its now, maxAge 365 days.
// Read in each test, once its zone is set.
const tagTime = (tag: string) => parseTag(tag) as Date;
const versions = [
  'test~20160415-140000', // 0 seconds ago
  'test~20160415-135959', // 1 second ago
  'test~20160415-135931', // 29 seconds ago
  'test~20160415-135930', // 30 seconds ago
  'test~20160415-130059', // 59 minutes 01 seconds ago
  'test~20160415-130030', // 59 minutes 30 seconds ago
  'test~20160415-130000', // 1 hour ago
  'test~20160415-120001', // 1 hour 59:59 ago
  'test~20160414-155959', // 22 hours 1 second ago
  'test~20160414-150001', // 22 hours 59 seconds ago
  'test~20160414-150000', // 23 hours ago
  'test~20160414-140000', // 1 day ago
  'test~20160414-130001', // 1 days 59:59 second ago
  'test~20160409-135959', // 6 days 1 second ago
  'test~20160408-140001', // 6 days 23:59:59 second ago
  'test~20160408-140000', // 7 days ago
  'test~20160408-135959', // 7 days 1 second ago
  'test~20160407-140001', // 7 days 23:59:59 ago
  'test~20160407-140000', // 8 days ago
  'test~20160317-140000', // 29 days ago
  'test~20160317-135959', // 29 days 1 second ago
  'test~20160316-140000', // 30 days ago
  'test~20160308-135959', // 37 days 1 second ago
  'test~20160301-140000', // 44 days ago
  'test~20160223-140000', // 51 days ago
  'test~20150423-140000', // 358 days ago (2016 was a leap year)
  'test~20150417-140000', // 364 days ago
  'test~20150416-140000', // 365 days ago
  'test~20150416-135959', // 365 days 1 second ago
  'test~20150416-135958', // 365 days 2 seconds ago
  'test~20150414-140000', // 367 days ago
];
const removed = [
  'test~20160415-135959',
  'test~20160415-135931',
  'test~20160415-130059',
  'test~20160415-130000',
  'test~20160414-155959',
  'test~20160414-150001',
  'test~20160414-140000',
  'test~20160409-135959',
  'test~20160408-140001',
  'test~20160408-135959',
  'test~20160407-140001',
  'test~20160317-135959',
  'test~20160308-135959',
  'test~20150417-140000',
  'test~20150416-135959',
  'test~20150416-135958',
  'test~20150414-140000',
];

t.test("staggered_test.go's test vector: the same versions removed", async (t) => {
  // Ages are differences of local times: in a zone with daylight saving, March's change would move
  // them by an hour, as it would Syncthing's own test.
  inTimeZone(t, 'UTC');
  t.equal(process.env.TZ, 'UTC', 'run in UTC');
  const now = tagTime('20160415-140000');
  t.same(staggeredToRemove(versions, now, 365 * 86400).sort(), [...removed].sort());
  t.same(
    staggeredToRemove([...versions].reverse(), now, 365 * 86400).sort(),
    [...removed].sort(),
    'in any order',
  );
});

t.test('maxAge 0 keeps versions forever, one a week past 30 days; an unparsable tag is kept', async (t) => {
  inTimeZone(t, 'UTC');
  const now = tagTime('20160415-140000');
  const kept = staggeredToRemove(versions, now, 0);
  t.notOk(kept.includes('test~20150414-140000'), 'the oldest is kept: nothing expires by age');
  t.ok(kept.includes('test~20150416-135958'), 'within a week of the one kept before it: removed');
  t.same(staggeredToRemove(['test~notatime', 'test~20160415-140000'], now), [], 'the odd name is kept');
  t.same(
    staggeredToRemove(['test~20160415-135950', 'test~20160415-140000'], now),
    ['test~20160415-140000'],
    'a version 10 s after the one kept is removed at once, the older one surviving',
  );
});

t.test('an archive is tagged with now, keeps its mtime, and thins the versions of that file', async (t) => {
  inTimeZone(t, 'UTC');
  const {
    root,
    versions: dir,
    versioner,
    clock,
    warnings,
  } = versionedFolder(t, { type: 'staggered' }, { sub: { 'a.txt': 'first' } });
  const mtime = local(2020, 1, 2, 3, 4, 5);
  setMtime(join(root, 'sub/a.txt'), mtime);
  await versioner.archive('sub/a.txt'); // 10:11:12
  t.same(readdirSync(join(dir, 'sub')), ['a~20220315-101112.txt']);
  t.equal(statSync(join(dir, 'sub/a~20220315-101112.txt')).mtimeMs, mtime.getTime(), 'the mtime kept');
  t.notOk(existsSync(join(root, 'sub/a.txt')), 'moved, not copied');
  clock.now = local(2022, 3, 15, 10, 11, 22);
  writeFileSync(join(root, 'sub/a.txt'), 'second');
  await versioner.archive('sub/a.txt');
  t.same(
    readdirSync(join(dir, 'sub')),
    ['a~20220315-101112.txt'],
    'the newer one, 10 s later, removed at once',
  );
  clock.now = local(2022, 3, 15, 10, 11, 52);
  writeFileSync(join(root, 'sub/a.txt'), 'third');
  await versioner.archive('sub/a.txt');
  t.same(
    readdirSync(join(dir, 'sub')).sort(),
    ['a~20220315-101112.txt', 'a~20220315-101152.txt'],
    '40 s: kept',
  );
  t.same(warnings, []);
});

t.test(
  'the cleanout expires by maxAge, and removes the directories left empty at the next pass',
  async (t) => {
    inTimeZone(t, 'UTC');
    const {
      versions: dir,
      versioner,
      clock,
    } = versionedFolder(
      t,
      { type: 'staggered', params: { maxAge: String(86400) } },
      {
        '.stversions': {
          old: { 'x~20220310-000000.txt': 'expired', deeper: { 'y~20220310-000000': 'expired' } },
          'z~20220315-100000.txt': 'kept',
          'z~20220315-100010.txt': 'too close to the one before',
          keep: { 'w~20220315-000000': 'kept' },
          empty: {},
        },
      },
    );
    clock.now = local(2022, 3, 15, 12);
    await versioner.clean();
    t.same(
      readdirSync(dir).sort(),
      ['keep', 'old', 'z~20220315-100000.txt'],
      'expired and thinned; empty gone',
    );
    t.same(readdirSync(join(dir, 'old')), ['deeper'], 'emptied by this pass: kept till the next');
    await versioner.clean();
    t.same(readdirSync(dir).sort(), ['keep', 'z~20220315-100000.txt']);
  },
);
