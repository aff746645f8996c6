// A name that differs from one on disk only in case, as Syncthing treats it (lib/fs/casefs.go).
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { pullPair } from '../../helpers/pull-rig.ts';

t.test('a new name differing only in case from one here is refused, in Syncthing’s words', async (t) => {
  const { paths, announce, scanHere, pull } = await pullPair(
    t,
    { 'README.md': 'the peer’s', sub: { 'Notes.txt': 'the peer’s notes' } },
    { 'readme.md': 'mine', sub: { 'notes.txt': 'my notes' } },
  );
  await scanHere();
  await announce();
  const result = await pull();
  t.same(result.problems.map((problem) => problem.error).sort(), [
    'remote "README.md" uses different upper or lowercase characters than local "readme.md"; change the casing on either side to match the other',
    'remote "sub/Notes.txt" uses different upper or lowercase characters than local "sub/notes.txt"; change the casing on either side to match the other',
  ]);
  t.same((await readdir(paths.target)).sort(), ['.stfolder', 'readme.md', 'sub'], 'no second file');
  t.equal(await readFile(join(paths.target, 'readme.md'), 'utf8'), 'mine', 'and mine as it was');
});

t.test('with caseSensitiveFS both names are made', async (t) => {
  const { paths, announce, scanHere, pull } = await pullPair(
    t,
    { 'README.md': 'the peer’s' },
    { 'readme.md': 'mine' },
    { caseSensitiveFS: true },
  );
  await scanHere();
  await announce();
  t.same((await pull()).problems, []);
  t.same((await readdir(paths.target)).sort(), ['.stfolder', 'README.md', 'readme.md']);
});

t.test('two names of the peer differing only in case: the first is made, the second refused', async (t) => {
  const { paths, announce, pull } = await pullPair(t, { 'a.txt': 'lower', 'A.txt': 'upper' }, {});
  await announce();
  const result = await pull();
  t.equal(result.problems.length, 1, 'one refused');
  t.match(result.problems[0]?.error, /uses different upper or lowercase characters/);
  t.equal((await readdir(paths.target)).length, 2, 'the marker and one file');
});
