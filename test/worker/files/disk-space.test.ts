import { statfsSync } from 'node:fs';
import t from 'tap';
import { FreeSpace, homeSpaceProblem } from '../../../worker/files/disk-space.ts';

t.test(
  'a file that does not fit, or would leave less than minDiskFree, is refused in Syncthing’s words',
  async (t) => {
    const root = t.testdir({});
    const space = new FreeSpace(root, { value: 1, unit: '%' }, '"Docs" (docs)');
    t.equal(await space.problem(1024), undefined, 'a small file fits');
    t.match(
      await space.problem(2 ** 50),
      new RegExp(
        `^insufficient space in folder "Docs" \\(docs\\) \\(${root}\\): current [\\d.]+ [KMGT]?B < required 1125.9 TB$`,
      ),
    );
    const all = new FreeSpace(root, { value: 100, unit: '%' }, 'docs');
    t.match(
      await all.problem(1),
      /^insufficient space in folder docs .*: current [\d.]+ % < required 100 %$/,
    );
    const absolute = new FreeSpace(root, { value: 1, unit: 'TB' }, 'docs');
    t.match(await absolute.problem(1), /current [\d.]+ [KMGT]?B < required 1 TB$/);
    t.equal(
      await new FreeSpace(root, { value: 0, unit: '%' }, 'docs').problem(2 ** 50),
      undefined,
      'with 0 nothing is checked, as in Syncthing: the writes meet a full disk themselves',
    );
  },
);

t.test('files let through count as taken until the disk is asked again', async (t) => {
  const root = t.testdir({});
  const space = new FreeSpace(root, { value: 1, unit: 'B' }, 'docs');
  const { bavail, bsize } = statfsSync(root);
  const half = Math.floor((bavail * bsize) / 2);
  t.equal(await space.problem(half), undefined, 'the first half fits');
  t.match(await space.problem(half * 1.5), /insufficient space/, 'not the same space twice');
});

t.test('the home disk below minHomeDiskFree is named in Syncthing’s words', async (t) => {
  const index = `${t.testdir({})}/index.sqlite`;
  t.match(
    await homeSpaceProblem(index, { value: 100, unit: '%' }),
    /^insufficient space on disk for database \(.*index\.sqlite\): current [\d.]+ % < required 100 %$/,
  );
  t.equal(await homeSpaceProblem(index, { value: 1, unit: 'kB' }), undefined, 'enough space: none');
  t.equal(await homeSpaceProblem(index, { value: 0, unit: '%' }), undefined, '0: not checked');
});
