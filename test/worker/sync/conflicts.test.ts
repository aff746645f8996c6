import { readdir, readFile } from 'node:fs/promises';
import t from 'tap';
import { shortIdString } from '../../../shared/device-id.ts';
import { conflictName, keepConflict } from '../../../worker/sync/conflicts.ts';

const me = 0x0123456789abcdefn;
const old = (stamp: string) => `a.sync-conflict-${stamp}-AAAAAAA.txt`;

t.test(
  'a losing version is kept as a conflict copy; the oldest beyond maxConflicts are removed',
  async (t) => {
    const path = t.testdir({
      'a.txt': 'the losing version',
      [old('20200101-000000')]: 'oldest',
      [old('20210101-000000')]: 'older',
      [old('20220101-000000')]: 'newest of the old',
      'b.txt': 'another file, with no copies',
      'a.txt.sync-conflict-notes': 'not a conflict copy',
    });
    const copy = await keepConflict({ path, maxConflicts: 2 }, 'a.txt', me);
    t.match(copy, new RegExp(`^a\\.sync-conflict-\\d{8}-\\d{6}-${shortIdString(me)}\\.txt$`));
    t.equal(await readFile(`${path}/${copy}`, 'utf8'), 'the losing version');
    t.same(
      (await readdir(path)).sort(),
      [copy, old('20220101-000000'), 'a.txt.sync-conflict-notes', 'b.txt'].sort(),
      'two copies kept, the newest; nothing else touched',
    );
  },
);

t.test('maxConflicts -1 keeps every copy; 0 keeps none', async (t) => {
  const path = t.testdir({ 'a.txt': 'x', [old('20200101-000000')]: 'old' });
  await keepConflict({ path, maxConflicts: -1 }, 'a.txt', me);
  t.equal((await readdir(path)).length, 2, 'all copies kept');
  const none = t.testdir({ sub: { 'a.txt': 'x' } });
  t.equal(await keepConflict({ path: none, maxConflicts: 0 }, 'sub/a.txt', me), undefined);
  t.same(await readdir(`${none}/sub`), [], 'the losing version is not kept, as configured');
});

t.test('a conflict copy that loses again is not copied again', async (t) => {
  const path = t.testdir({ [old('20200101-000000')]: 'old' });
  t.equal(await keepConflict({ path }, old('20200101-000000'), me), undefined);
  t.same(await readdir(path), []);
});

t.test("a conflict copy's name splits the extension as Syncthing does (Go's filepath.Ext)", async (t) => {
  const at = new Date(2022, 2, 15, 10, 11, 12);
  const id = shortIdString(me);
  const cases: Array<[string, string]> = [
    ['dir.v2/file', `dir.v2/file.sync-conflict-20220315-101112-${id}`],
    ['a.tar.gz', `a.tar.sync-conflict-20220315-101112-${id}.gz`],
    ['.bashrc', `.sync-conflict-20220315-101112-${id}.bashrc`],
    ['file.', `file.sync-conflict-20220315-101112-${id}.`],
  ];
  for (const [name, expected] of cases) t.equal(conflictName(name, me, at), expected, name);
  t.equal(conflictName('x.txt', 0n, at), 'x.sync-conflict-20220315-101112-.txt', 'no modifier: empty');
});
