// syncd's POST /rest/syncd/ignores/preview, in-process against a real service: what ignore lines would
// leave out of a folder, walked as a scan walks it, bounded, and with nothing written.
import { lstat, mkdir, readdir, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { EventLog } from '../../../worker/events/event-log.ts';
import { buildApp } from '../../../worker/http/app.ts';
import { LOOKED_AT_MOST, previewIgnores, SHOWN_IGNORED } from '../../../worker/scanner/ignore-preview.ts';
import { Ignores } from '../../../worker/scanner/ignores.ts';
import { appOptions, injector } from '../../helpers/app.ts';
import { localConfig, testConfiguration } from '../../helpers/config.ts';
import { heldService } from '../../helpers/held-service.ts';

async function setup(t: Test) {
  const home = t.testdir({
    data: {
      'a.txt': 'a',
      'a.log': 'log',
      'keep.log': 'kept',
      'more-ignores.txt': '*.o\n',
      build: { 'out.o': 'o', deep: { 'x.o': 'x' } },
      notes: { 'n.log': 'n' },
      src: {
        'main.c': 'c',
        build: { 'y.o': 'y' },
        vendor: { lib: { 'z.js': 'z' }, 'v.js': 'v' },
      },
    },
    // Reached through the symlink `data/link` only: a walk of the folder never goes there.
    outside: { 'secret.log': 'secret' },
    big: {},
  });
  const data = join(home, 'data');
  await symlink(join(home, 'outside'), join(data, 'link'));
  const local = localConfig(
    testConfiguration({
      folders: [
        // No watcher: nothing but the test's own requests scans the folder.
        { id: 'f', label: 'F', path: data, fsWatcherEnabled: false },
        { id: 'big', path: join(home, 'big'), paused: true },
      ],
    }),
  );
  const events = new EventLog();
  const { service } = await heldService(t, home, local.config, events);
  const app = buildApp(appOptions({ config: local.config, events, model: () => service.model }));
  await app.ready();
  t.teardown(() => app.close());
  const call = injector(app);
  // A scan asked for ends after the one at start: the folder is indexed, its marker made.
  await call('POST', '/rest/db/scan?folder=f');
  const preview = async (ignore: unknown, folder = 'f') =>
    call('POST', `/rest/syncd/ignores/preview?folder=${folder}`, { ignore });
  return { home, data, call, preview };
}

t.test('the patterns ignore what a scan would leave out, rooted and not, never past a symlink', async (t) => {
  const { preview } = await setup(t);
  const answer = await preview(['*.log', '/build', 'secret*', '// a comment']);
  t.equal(answer.status, 200);
  t.same(answer.json(), {
    // An ignored directory is not entered (no ! pattern): `build/out.o` is not looked at.
    ignored: ['a.log', 'build', 'keep.log', 'notes/n.log'],
    total: 4,
    // a.log a.txt build keep.log link more-ignores.txt notes notes/n.log src src/build src/build/y.o
    // src/main.c src/vendor src/vendor/lib src/vendor/lib/z.js src/vendor/v.js
    scanned: 16,
    truncated: false,
  });
  t.same((await preview([])).json(), { ignored: [], total: 0, scanned: 19, truncated: false }, 'none');
});

t.test('a negated pattern takes a name back, and ignored directories are then walked', async (t) => {
  const { preview } = await setup(t);
  const answer = (await preview(['!keep.log', '*.log', 'build'])).json();
  t.same(answer.ignored, [
    'a.log',
    'build',
    'build/deep',
    'build/deep/x.o',
    'build/out.o',
    'notes/n.log',
    'src/build',
    'src/build/y.o',
  ]);
  t.equal(answer.total, 8);
  t.equal(answer.scanned, 19, 'every name, the ignored directories’ too');
  // The first pattern that matches decides: a later ! takes nothing back.
  t.ok((await preview(['*.log', '!keep.log'])).json().ignored.includes('keep.log'));
});

t.test('a pattern with a slash matches a nested folder at any depth, or from the root', async (t) => {
  const { preview } = await setup(t);
  t.same((await preview(['vendor/lib'])).json().ignored, ['src/vendor/lib']);
  t.same((await preview(['/vendor/lib'])).json().ignored, [], 'rooted: no vendor/lib at the root');
  t.same(
    (await preview(['src/vendor/'])).json().ignored,
    ['src/vendor/lib', 'src/vendor/v.js'],
    'a trailing slash: what is below, not the folder itself',
  );
  t.same((await preview(['(?i)SRC/*/LIB'])).json().ignored, ['src/vendor/lib'], 'case folded');
});

t.test('#include reads a file beside .stignore, as the scan does', async (t) => {
  const { preview } = await setup(t);
  const answer = (await preview(['!build/deep/x.o', '#include more-ignores.txt'])).json();
  t.same(answer.ignored, ['build/out.o', 'src/build/y.o'], '*.o from the file, one taken back before it');
  const missing = await preview(['#include nowhere.txt']);
  t.match(
    [missing.status, missing.json()],
    [400, { code: 'SYNCD_ERR_INVALID_IGNORES', message: /#include nowhere\.txt.*cannot read nowhere\.txt/ }],
  );
});

t.test(
  'bad input: 400 with the matcher’s message or the body’s shape; an unknown folder is 404',
  async (t) => {
    const { preview, call } = await setup(t);
    const bad = await preview(['*.log', '[oops']);
    t.match(
      [bad.status, bad.json()],
      [400, { code: 'SYNCD_ERR_INVALID_IGNORES', message: /"\[oops": an unclosed \[/ }],
    );
    const empty = await preview(['!']);
    t.match([empty.status, empty.json()], [400, { message: /missing pattern/ }]);
    t.match((await preview('*.log')).json(), { statusCode: 400, code: 'SYNCD_ERR_INVALID_QUERY' });
    const notJson = await call('POST', '/rest/syncd/ignores/preview?folder=f', '{"ignore": [');
    t.match([notJson.status, notJson.json()], [400, { message: /must be JSON/ }]);
    t.match((await preview([], 'nope')).json(), { statusCode: 404, code: 'SYNCD_ERR_NOT_FOUND' });
    const noFolder = await call('POST', '/rest/syncd/ignores/preview', { ignore: [] });
    t.match([noFolder.status, noFolder.json()], [404, { message: /give \?folder=ID/ }]);
    t.equal((await call('GET', '/rest/syncd/ignores/preview?folder=f')).status, 405);
  },
);

t.test(
  `the walk stops at its bound (${LOOKED_AT_MOST} names for the route), and lists ${SHOWN_IGNORED}`,
  async (t) => {
    // The bound's logic at a tenth of the route's: 2,200 names made, not 20,050.
    const limit = 2000;
    const root = t.testdir({});
    for (let d = 0; d < 22; d++) {
      const dir = join(root, `d${String(d).padStart(2, '0')}`);
      await mkdir(dir);
      await Promise.all(Array.from({ length: 100 }, (_, i) => writeFile(join(dir, `${i}.x`), '')));
    }
    const answer = await previewIgnores(root, await Ignores.parse(['*.x'], root), { limit });
    t.equal(answer.scanned, limit);
    t.equal(answer.truncated, true);
    t.equal(answer.ignored.length, SHOWN_IGNORED);
    t.equal(answer.total, limit - 20, 'every name looked at but the 20 directories');
    t.equal(answer.ignored[0], 'd00/0.x');
    const all = await previewIgnores(root, await Ignores.parse(['*.x'], root));
    t.same([all.scanned, all.truncated], [2222, false], 'under the route’s bound, everything');
  },
);

t.test(
  'nothing is written: no rename to NFC, no temporary removed, no .stignore, no index change',
  async (t) => {
    const { data, call, preview } = await setup(t);
    // Made after the scan at start, which would have renamed and removed them.
    await writeFile(join(data, 'cafe\u0301.log'), 'not NFC');
    const temporary = join(data, '.syncthing.old.txt.tmp');
    await writeFile(temporary, 'half a pull');
    const longAgo = new Date('2001-01-01T00:00:00Z');
    await utimes(temporary, longAgo, longAgo);
    const status = async () => {
      const { sequence, localFiles, localDirectories, ignorePatterns } = (
        await call('GET', '/rest/db/status?folder=f')
      ).json();
      return { sequence, localFiles, localDirectories, ignorePatterns };
    };
    const before = { tree: await tree(data), status: await status() };
    for (const lines of [['*.log'], ['!keep.log', '*'], ['#include more-ignores.txt'], ['[bad']]) {
      await preview(lines);
    }
    t.same(await tree(data), before.tree, 'the folder as it was, to the modification times');
    t.same(await status(), before.status, 'the index as it was');
    t.same((await call('GET', '/rest/db/ignores?folder=f')).json(), { ignore: null, expanded: null });
    t.notOk(before.tree.some(([name]) => name === '.stignore'));
  },
);

// Every name below `root` with its type, size and modification time.
async function tree(root: string): Promise<Array<[string, string, number, number]>> {
  const out: Array<[string, string, number, number]> = [];
  for (const name of (await readdir(root, { recursive: true })).sort()) {
    const stats = await lstat(join(root, name));
    const type = stats.isDirectory() ? 'dir' : stats.isSymbolicLink() ? 'link' : 'file';
    out.push([name, type, stats.isDirectory() ? 0 : stats.size, stats.mtimeMs]);
  }
  return out;
}
