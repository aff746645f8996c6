// The index behind Syncthing's /rest/db endpoints, in-process: a real index, real hashing threads and
// real folders on disk; the supervisor's side of the configuration is played by localConfig.
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { buildApp } from '../../../worker/http/app.ts';
import { EventLog } from '../../../worker/events/event-log.ts';
import { MARKER_MISSING, PATH_MISSING } from '../../../worker/files/folder-root.ts';
import { INDEX_FILE } from '../../../worker/index-db/index-db.ts';
import { appOptions, injector, testApiKey } from '../../helpers/app.ts';
import { localConfig, testConfiguration } from '../../helpers/config.ts';
import { heldService } from '../../helpers/held-service.ts';

async function setup(t: Test, options: { folders?: Array<Record<string, unknown>>; held?: boolean } = {}) {
  const home = t.testdir({
    data: { 'a.txt': 'hello', sub: { 'b.bin': 'x'.repeat(300_000), deeper: { c: 'c' } } },
  });
  const data = join(home, 'data');
  const local = localConfig(
    testConfiguration({ folders: options.folders ?? [{ id: 'f', label: 'F', path: data }] }),
  );
  const events = new EventLog();
  const service =
    options.held === false ? undefined : (await heldService(t, home, local.config, events)).service;
  const app = buildApp(appOptions({ config: local.config, events, model: () => service?.model }));
  await app.ready();
  t.teardown(() => app.close());
  const call = injector(app);
  // A scan asked for ends after the one at start: the index is complete once it answers.
  await call('POST', '/rest/db/scan?folder=f');
  const typesOf = async () =>
    (await events.subscription(EventLog.defaultTypes).since(0, 0)).map((e) => e.type);
  return { home, data, call, events, typesOf, local, service: () => service };
}

t.test('a new folder gets its marker and is indexed; its status in Syncthing’s shape', async (t) => {
  const { data, call, typesOf } = await setup(t);
  t.ok((await stat(join(data, '.stfolder'))).isDirectory(), 'the marker, as Syncthing makes it');
  const status = await call('GET', '/rest/db/status?folder=f');
  t.equal(status.status, 200);
  t.match(status.json(), {
    state: 'idle',
    localFiles: 3,
    localDirectories: 2,
    localBytes: 5 + 300_000 + 1 + 2 * 128,
    globalFiles: 3,
    needFiles: 0,
    sequence: 5,
    errors: 0,
  });
  const types = await typesOf();
  for (const type of ['StateChanged', 'LocalIndexUpdated', 'FolderSummary'] as const) {
    t.ok(types.includes(type), type);
  }
});

t.test('GET /rest/db/file, /browse, /need, /completion and /rest/folder/errors', async (t) => {
  const { call, data } = await setup(t);
  const file = (await call('GET', '/rest/db/file?folder=f&file=sub/b.bin')).json();
  t.match(file.local, {
    name: 'sub/b.bin',
    type: 'FILE_INFO_TYPE_FILE',
    size: 300_000,
    numBlocks: 3,
    deleted: false,
    permissions: /^0[0-7]{3}$/,
    version: [/^[A-Z2-7]{7}:\d+$/],
    modified: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/,
  });
  t.same(file.global, file.local, 'global is local until devices share the folder');
  t.equal((await call('GET', '/rest/db/file?folder=f&file=nope')).status, 404);

  const tree = (await call('GET', '/rest/db/browse?folder=f')).json();
  t.match(tree, [
    { name: 'a.txt', type: 'FILE_INFO_TYPE_FILE', size: 5 },
    {
      name: 'sub',
      type: 'FILE_INFO_TYPE_DIRECTORY',
      size: 128,
      children: [{ name: 'b.bin' }, { name: 'deeper', children: [{ name: 'c' }] }],
    },
  ]);
  t.same(
    (await call('GET', '/rest/db/browse?folder=f&levels=0'))
      .json()
      .map((e: { name: string; children?: unknown }) => [e.name, e.children]),
    [
      ['a.txt', undefined],
      ['sub', undefined],
    ],
  );
  t.same(
    (await call('GET', '/rest/db/browse?folder=f&prefix=sub&dirsonly=1'))
      .json()
      .map((e: { name: string }) => e.name),
    ['deeper'],
  );
  t.same((await call('GET', '/rest/db/need?folder=f')).json(), {
    progress: [],
    queued: [],
    rest: [],
    page: 1,
    perpage: 65536,
  });
  t.match((await call('GET', '/rest/db/completion?folder=f')).json(), {
    completion: 100,
    needBytes: 0,
    globalItems: 5,
    sequence: 5,
  });
  t.equal((await call('GET', '/rest/db/completion?device=bogus')).status, 400);

  await writeFile(
    Buffer.concat([Buffer.from(`${data}/bad-`), Buffer.from([0xff]), Buffer.from('.txt')]),
    'x',
  );
  await call('POST', '/rest/db/scan?folder=f');
  const errors = (await call('GET', '/rest/folder/errors?folder=f')).json();
  t.match(errors, { folder: 'f', errors: [{ path: /^bad-/, error: /not valid UTF-8/ }], page: 1 });
  t.equal((await call('GET', '/rest/db/status?folder=f')).json().errors, 1);
});

t.test('unknown folders are 404; a scan of a sub path; a paused folder is not scanned', async (t) => {
  const { call, data, local } = await setup(t);
  for (const path of [
    '/rest/db/status?folder=nope',
    '/rest/db/status',
    '/rest/db/file?folder=nope&file=a',
    '/rest/db/browse?folder=nope',
    '/rest/folder/errors?folder=nope',
  ]) {
    t.equal((await call('GET', path)).status, 404, path);
  }
  t.equal((await call('POST', '/rest/db/scan?folder=nope')).status, 404);
  await writeFile(join(data, 'sub', 'new'), 'new');
  t.equal((await call('POST', '/rest/db/scan?folder=f&sub=sub')).status, 200);
  t.equal((await call('GET', '/rest/db/file?folder=f&file=sub/new')).status, 200);
  t.equal((await call('POST', '/rest/db/scan?folder=f&sub=../etc')).status, 400);
  await local.config.change((draft) => {
    (draft.folders[0] as { paused: boolean }).paused = true;
  });
  t.equal((await call('GET', '/rest/db/status?folder=f')).json().state, 'paused');
  t.equal((await call('POST', '/rest/db/scan?folder=f')).status, 409);
  await local.config.change((draft) => {
    (draft.folders[0] as { paused: boolean }).paused = false;
  });
  t.equal((await call('POST', '/rest/db/scan')).status, 200, 'all folders');
  t.equal((await call('GET', '/rest/db/status?folder=f')).json().state, 'idle');
});

t.test('a folder whose disk is gone is in error, and nothing is recorded as deleted', async (t) => {
  const { call, data } = await setup(t);
  await rename(data, `${data}-unmounted`);
  t.equal((await call('POST', '/rest/db/scan?folder=f')).status, 409);
  t.match((await call('GET', '/rest/db/status?folder=f')).json(), {
    state: 'error',
    error: PATH_MISSING,
    localFiles: 3,
    localDeleted: 0,
  });
  await rename(`${data}-unmounted`, data);
  await rm(join(data, '.stfolder'), { recursive: true });
  await call('POST', '/rest/db/scan?folder=f');
  t.match((await call('GET', '/rest/db/status?folder=f')).json(), {
    state: 'error',
    error: MARKER_MISSING,
    localDeleted: 0,
  });
  await t.rejects(
    stat(join(data, '.stfolder')),
    { code: 'ENOENT' },
    'the marker of an indexed folder is never made again',
  );
  await mkdir(join(data, '.stfolder'));
  t.equal((await call('POST', '/rest/db/scan?folder=f')).status, 200);
  t.match((await call('GET', '/rest/db/status?folder=f')).json(), { state: 'idle', localFiles: 3 });
});

t.test(
  'a folder whose path cannot be made (under /proc) is in error with the reason, and its scan answers',
  { skip: process.platform === 'linux' ? false : '/proc is Linux’s' },
  async (t) => {
    // /proc answers ENOENT to a mkdir there, which Node's recursive mkdir tried again forever.
    const { call } = await setup(t, { folders: [{ id: 'f', path: '/proc/syncd-test/x' }] });
    const started = Date.now();
    const scan = await call('POST', '/rest/db/scan?folder=f');
    t.equal(scan.status, 409);
    t.match(scan.json(), {
      code: 'SYNCD_ERR_FOLDER_ERROR',
      message: /cannot be scanned: folder path missing \(failed to create folder root directory: ENOENT/,
    });
    t.ok(Date.now() - started < 5000, 'answered at once');
    t.match((await call('GET', '/rest/db/status?folder=f')).json(), {
      state: 'error',
      error: /^folder path missing \(failed to create folder root directory: ENOENT.*\/proc\/syncd-test/,
    });
  },
);

t.test('a folder removed from the configuration has its index erased', async (t) => {
  const { call, local, service } = await setup(t);
  await local.config.change((draft) => {
    draft.folders = [];
  });
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.same(service()?.db?.files('f'), []);
  t.equal((await call('GET', '/rest/db/status?folder=f')).status, 404);
});

t.test(
  'no service held: 503 with Retry-After; an index that cannot be used: the folder says why',
  async (t) => {
    const free = await setup(t, { held: false });
    const answer = await free.call('GET', '/rest/db/status?folder=f');
    t.match([answer.status, answer.json()], [503, { code: 'SYNCD_ERR_SERVICE_UNAVAILABLE' }]);

    const home = t.testdir();
    await writeFile(join(home, INDEX_FILE), 'not a database');
    const local = localConfig(testConfiguration({ folders: [{ id: 'f', path: join(home, 'x') }] }));
    const { service } = await heldService(t, home, local.config);
    t.match(service.indexError, /is not an SQLite database/);
    const app = buildApp(
      appOptions({ config: local.config, events: new EventLog(), model: () => service.model }),
    );
    t.teardown(() => app.close());
    const status = await app.inject({
      url: '/rest/db/status?folder=f',
      headers: { 'x-api-key': testApiKey },
    });
    t.match(status.json(), { state: 'error', error: /the index cannot be used/ });
  },
);

t.test('GET and POST /rest/db/ignores: the lines, the expanded patterns, and a rescan', async (t) => {
  const { call, data } = await setup(t);
  t.same((await call('GET', '/rest/db/ignores?folder=f')).json(), { ignore: null, expanded: null });
  const posted = await call('POST', '/rest/db/ignores?folder=f', { ignore: ['sub', '// why'] });
  t.equal(posted.status, 200);
  t.same(posted.json(), { ignore: ['sub', '// why'], expanded: ['sub', '**/sub', 'sub/**', '**/sub/**'] });
  t.match((await call('GET', '/rest/db/status?folder=f')).json(), {
    ignorePatterns: true,
    localFiles: 1,
    localDirectories: 0,
  });
  t.match((await call('GET', '/rest/db/file?folder=f&file=sub/b.bin')).json().local, {
    ignored: true,
    invalid: true,
    localFlags: 2,
  });
  const bad = await call('POST', '/rest/db/ignores?folder=f', { ignore: ['[oops'] });
  t.match([bad.status, bad.json()], [400, { code: 'SYNCD_ERR_INVALID_IGNORES', message: /an unclosed \[/ }]);
  t.equal((await call('POST', '/rest/db/ignores?folder=f', { ignore: 'sub' })).status, 400);
  t.same(
    (await call('GET', '/rest/db/ignores?folder=f')).json().ignore,
    ['sub', '// why'],
    'unchanged by the refused ones',
  );
  const { readFile } = await import('node:fs/promises');
  t.equal(await readFile(join(data, '.stignore'), 'utf8'), 'sub\n// why\n');
});
