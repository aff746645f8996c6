// What a pull does with names the folder ignores, against Syncthing's rules (folder_sendrecv.go
// processNeeded, deleteDirOnDisk): the devices are a source folder scanned by the real scanner.
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { LOCAL } from '../../../worker/index-db/index-db.ts';
import { folderNeed } from '../../../worker/index-db/global.ts';
import { PEER, pullPair } from '../../helpers/pull-rig.ts';

t.test('an ignored name is never created or changed by a pull, and is needed no more', async (t) => {
  const { paths, db, announce, scanHere, pull, ignore } = await pullPair(
    t,
    { 'new.log': 'from the peer', 'mine.log': 'the peer’s version', 'a.txt': 'a', logs: { 'x.txt': 'x' } },
    { 'mine.log': 'my own, ignored here' },
  );
  await ignore(['*.log', '/logs']);
  await scanHere();
  await announce();
  const result = await pull();
  t.same(result.problems, [], 'no error: an ignored name is not an error');
  t.same(
    (await readdir(paths.target)).sort(),
    ['.stfolder', '.stignore', 'a.txt', 'mine.log'],
    'nothing ignored made',
  );
  t.equal(await readFile(join(paths.target, 'mine.log'), 'utf8'), 'my own, ignored here', 'nor changed');
  t.same(folderNeed(db, 'f').needed, [], 'nothing needed any more');
  const marked = db.file('f', 'new.log', LOCAL);
  const theirs = db.file('f', 'new.log', PEER);
  t.match(marked, { invalid: true, size: 0, blocks: [], version: theirs?.version }, 'recorded as ignored');
});

t.test('a directory deleted elsewhere stays while it holds what is ignored here', async (t) => {
  const { paths, announce, scanHere, pull, ignore } = await pullPair(t, { d: { 'a.txt': 'a' } }, {});
  await announce();
  t.same((await pull()).problems, []);
  await scanHere();
  await writeFile(join(paths.target, 'd', 'keep.log'), 'ignored here');
  await writeFile(join(paths.target, 'd', '.syncthing.b.txt.tmp'), 'an old temporary');
  await rm(join(paths.source, 'd'), { recursive: true });
  await announce();

  await ignore(['*.log']);
  const kept = await pull();
  t.match(kept.problems, [
    {
      name: 'd',
      error:
        'delete dir: directory has been deleted on a remote device but contains ignored files (see ignore documentation for (?d) prefix)',
    },
  ]);
  t.same((await readdir(join(paths.target, 'd'))).sort(), ['.syncthing.b.txt.tmp', 'keep.log'], 'all kept');

  await ignore(['(?d)*.log']);
  const gone = await pull();
  t.same(gone.problems, [], 'with (?d) the ignored entry goes with its directory');
  t.same((await readdir(paths.target)).sort(), ['.stfolder', '.stignore'], 'and the temporary too');
});

t.test('a directory deleted elsewhere stays while it holds what the index does not know', async (t) => {
  const { paths, announce, scanHere, pull } = await pullPair(t, { d: { 'a.txt': 'a' } }, {});
  await announce();
  await pull();
  await scanHere();
  await mkdir(join(paths.target, 'd', 'new'));
  await rm(join(paths.source, 'd'), { recursive: true });
  await announce();
  const result = await pull();
  t.match(result.problems, [{ name: 'd', error: /but contains changed files, scheduling scan$/ }]);
  t.same(result.toScan, ['d'], 'and it is scanned');
  t.same(await readdir(join(paths.target, 'd')), ['new']);
});

t.test('ignoring a file keeps its version; un-ignoring one that is not here brings it back', async (t) => {
  const { paths, db, announce, scanHere, pull, ignore } = await pullPair(t, { 'a.txt': 'the peer’s a' }, {});
  await announce();
  await pull();
  await scanHere();
  const before = db.file('f', 'a.txt', LOCAL);

  await ignore(['a.txt']);
  await scanHere();
  const ignored = db.file('f', 'a.txt', LOCAL);
  t.match(
    ignored,
    { invalid: true, deleted: false, size: 0, version: before?.version },
    'marked, not changed',
  );

  await rm(join(paths.target, 'a.txt'));
  await ignore([]);
  await scanHere();
  t.match(
    db.file('f', 'a.txt', LOCAL),
    { invalid: false, deleted: true, version: [] },
    'no version of its own',
  );
  t.equal(db.file('f', 'a.txt', PEER)?.deleted, false, 'which deletes nothing for the peer');
  await pull();
  t.equal(await readFile(join(paths.target, 'a.txt'), 'utf8'), 'the peer’s a', 'pulled again');
});

t.test('un-ignoring a file that is here makes it a change of this device alone', async (t) => {
  const { paths, db, announce, scanHere, pull, ignore } = await pullPair(t, { 'a.txt': 'the peer’s a' }, {});
  await announce();
  await ignore(['a.txt']);
  await pull();
  t.equal(db.file('f', 'a.txt', LOCAL)?.invalid, true, 'ignored when pulled');
  await writeFile(join(paths.target, 'a.txt'), 'made here while ignored');
  await ignore([]);
  await scanHere();
  const record = db.file('f', 'a.txt', LOCAL);
  t.match(record, { invalid: false, deleted: false }, 'scanned once no longer ignored');
  t.same(
    record?.version.map((counter) => counter.id),
    [9n],
    "only this device's counter: it meets the peer's version as a conflict",
  );
});

t.test('a deletable directory goes only if nothing below it must stay', async (t) => {
  const { paths, announce, scanHere, pull, ignore } = await pullPair(t, { d: { 'a.txt': 'a' } }, {});
  await announce();
  await pull();
  await scanHere();
  await mkdir(join(paths.target, 'd', 'build'));
  await writeFile(join(paths.target, 'd', 'build', 'out.o'), 'built');
  // Not ignored (the first pattern that matches decides), and not scanned yet: the user's.
  await writeFile(join(paths.target, 'd', 'build', 'keep.txt'), 'mine');
  await ignore(['!d/build/keep.txt', '(?d)build']);
  await rm(join(paths.source, 'd'), { recursive: true });
  await announce();
  const result = await pull();
  t.match(result.problems, [{ name: 'd', error: /but contains changed files, scheduling scan$/ }]);
  t.same((await readdir(join(paths.target, 'd', 'build'))).sort(), ['keep.txt', 'out.o'], 'nothing removed');
});

t.test('a directory deleted elsewhere holding a file changed here is scanned, and kept', async (t) => {
  const { paths, announce, scanHere, pull } = await pullPair(t, { d: { 'a.txt': 'a' } }, {});
  await announce();
  await pull();
  await scanHere();
  await writeFile(join(paths.target, 'd', 'a.txt'), 'changed here, not scanned yet');
  await rm(join(paths.source, 'd'), { recursive: true });
  await announce();
  const result = await pull();
  t.match(
    result.problems,
    [
      { name: 'd/a.txt', error: /changed on disk since it was last scanned; scheduling scan/ },
      { name: 'd', error: /but contains changed files, scheduling scan$/ },
    ],
    'both scanned first',
  );
  t.same(result.toScan.sort(), ['d', 'd/a.txt']);
  t.equal(await readFile(join(paths.target, 'd', 'a.txt'), 'utf8'), 'changed here, not scanned yet');
});
