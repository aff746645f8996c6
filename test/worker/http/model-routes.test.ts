// The REST routes against a fake SyncModel: what each route asks of the model, and how it answers what
// the model refuses, with no index, folder or device behind it.
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { EventLog } from '../../../worker/events/event-log.ts';
import { buildApp } from '../../../worker/http/app.ts';
import { ModelError, type SyncModel } from '../../../worker/service/model.ts';
import { appOptions, injector, testApiKey } from '../../helpers/app.ts';
import { localConfig, newDeviceId, testConfiguration, testDeviceId } from '../../helpers/config.ts';
import { fakeModel } from '../../helpers/fake-model.ts';

const peer = newDeviceId();

async function setup(t: Test, model: SyncModel | undefined) {
  const local = localConfig(
    testConfiguration({
      devices: [{ deviceID: peer }],
      folders: [
        { id: 'f', path: '/nowhere', devices: [{ deviceID: peer }] },
        { id: 'g', path: '/else' },
      ],
    }),
  );
  const app = buildApp(appOptions({ config: local.config, events: new EventLog(), model: () => model }));
  await app.ready();
  t.teardown(() => app.close());
  return injector(app);
}

const record = (name: string) => ({
  name,
  type: 'file' as const,
  size: 5,
  permissions: 0o644,
  modifiedS: 1_700_000_000,
  modifiedNs: 500_000_000,
  modifiedBy: 0n,
  deleted: false,
  invalid: false,
  noPermissions: false,
  version: [{ id: 1n, value: 2n }],
  sequence: 3,
  blockSize: 131072,
  blocks: [],
  symlinkTarget: '',
});

t.test('no model held: every route that needs one answers 503 with Retry-After', async (t) => {
  const call = await setup(t, undefined);
  for (const [method, url] of [
    ['GET', '/rest/db/status?folder=f'],
    ['GET', '/rest/db/completion'],
    ['GET', '/rest/cluster/pending/devices'],
    ['GET', '/rest/stats/folder'],
    ['GET', '/rest/folder/versions?folder=f'],
  ] as const) {
    const answer = await call(method, url);
    t.match([answer.status, answer.json()], [503, { code: 'SYNCD_ERR_SERVICE_UNAVAILABLE' }], url);
  }
});

t.test('a folder that is not configured is 404 before the model is asked', async (t) => {
  const { model, calls } = fakeModel();
  const call = await setup(t, model);
  const answer = await call('GET', '/rest/db/status?folder=nope');
  t.match([answer.status, answer.json()], [404, { code: 'SYNCD_ERR_NOT_FOUND' }]);
  t.same(calls, [], 'the model was not asked');
});

t.test('what the model refuses is answered with the code of its kind', async (t) => {
  const cases = [
    ['folder-paused', 409, 'SYNCD_ERR_FOLDER_PAUSED'],
    ['folder-not-running', 409, 'SYNCD_ERR_FOLDER_ERROR'],
    ['folder-type', 409, 'SYNCD_ERR_FOLDER_TYPE'],
    ['invalid-ignores', 400, 'SYNCD_ERR_INVALID_IGNORES'],
  ] as const;
  for (const [kind, status, code] of cases) {
    const { model } = fakeModel({
      scan: async () => {
        throw new ModelError(kind, `refused: ${kind}`);
      },
    });
    const call = await setup(t, model);
    const answer = await call('POST', '/rest/db/scan?folder=f');
    t.match([answer.status, answer.json()], [status, { code, message: `refused: ${kind}` }], kind);
  }
});

t.test(
  'scan passes the folder and its cleaned sub paths; a sub outside the folder is 400, after the model',
  async (t) => {
    const scanned: Array<[string | undefined, string[]]> = [];
    const { model } = fakeModel({
      scan: async (folder, subs) => {
        scanned.push([folder, subs()]);
      },
    });
    const call = await setup(t, model);
    t.equal((await call('POST', '/rest/db/scan?folder=f&sub=/a/b/&sub=c')).status, 200);
    t.equal((await call('POST', '/rest/db/scan')).status, 200);
    t.same(scanned, [
      ['f', ['a/b', 'c']],
      [undefined, []],
    ]);
    t.equal((await call('POST', '/rest/db/scan?folder=f&sub=../x')).status, 400);
    // What the model refuses comes before the sub paths and the body are read.
    const refusing = fakeModel({
      scan: async () => {
        throw new ModelError('folder-paused', 'folder f is paused');
      },
      setIgnores: async () => {
        throw new ModelError('folder-not-running', 'folder f cannot be scanned: it is starting');
      },
    });
    const paused = await setup(t, refusing.model);
    t.equal((await paused('POST', '/rest/db/scan?folder=f&sub=../x')).status, 409, 'scan: 409 first');
    t.equal(
      (await paused('POST', '/rest/db/ignores?folder=f', 'not json')).status,
      409,
      'ignores: 409 first',
    );
  },
);

t.test('need and remoteneed: pages asked of the model, records in Syncthing’s shape', async (t) => {
  const { model, calls } = fakeModel({
    need: () => [record('b.txt'), record('a.txt')],
    pulling: () => new Set(['b.txt']),
  });
  const call = await setup(t, model);
  const need = (await call('GET', '/rest/db/need?folder=f&page=2&perpage=5')).json();
  t.match(need, {
    page: 2,
    perpage: 5,
    progress: [{ name: 'b.txt' }],
    queued: [],
    rest: [{ name: 'a.txt', modified: '2023-11-14T22:13:20.5Z', permissions: '0644', numBlocks: 0 }],
  });
  t.equal(need.progress.length + need.rest.length, 2, 'the files being pulled apart from the rest');
  t.equal((await call('GET', `/rest/db/remoteneed?folder=f&device=${peer}`)).status, 200);
  const notShared = await call('GET', `/rest/db/remoteneed?folder=g&device=${peer}`);
  t.equal(notShared.status, 404, 'a folder not shared with the device');
  t.same(calls, [
    ['pulling', ['f']],
    ['need', ['f', { page: 2, perpage: 5 }]],
    ['need', ['f', { page: 1, perpage: 65536 }, peer]],
  ]);
});

t.test('completion: every folder, or one; this device is asked as none', async (t) => {
  const report = {
    completion: 100,
    globalBytes: 0,
    globalItems: 0,
    needBytes: 0,
    needDeletes: 0,
    needItems: 0,
    sequence: 0,
  };
  const { model, calls } = fakeModel({ completion: () => report });
  const call = await setup(t, model);
  t.same((await call('GET', '/rest/db/completion')).json(), report);
  await call('GET', `/rest/db/completion?folder=f&device=${peer}`);
  t.same(calls, [
    ['completion', [['f', 'g'], undefined]],
    ['completion', [['f'], peer]],
  ]);
});

t.test('a restore reads its body only once the model knows the folder keeps versions', async (t) => {
  const { model } = fakeModel({
    restoreVersions: async () => {
      throw new ModelError('no-versioning', 'no versioner');
    },
  });
  const call = await setup(t, model);
  const answer = await call('POST', '/rest/folder/versions?folder=f', 'not json');
  t.match([answer.status, answer.json()], [409, { code: 'SYNCD_ERR_NO_VERSIONING' }]);
});

t.test('POST /rest/db/prio: the file asked of the model first, then the need', async (t) => {
  const { model, calls } = fakeModel({
    bringToFront: () => {},
    need: () => [record('a.txt')],
    pulling: () => new Set(),
  });
  const call = await setup(t, model);
  const prio = await call('POST', '/rest/db/prio?folder=f&file=a.txt');
  t.equal(prio.status, 200);
  t.match(prio.json(), { progress: [], queued: [], rest: [{ name: 'a.txt' }], page: 1, perpage: 65536 });
  const noFile = await call('POST', '/rest/db/prio?folder=f');
  t.match([noFile.status, noFile.json().message], [400, /give \?file=NAME/]);
  t.equal((await call('POST', '/rest/db/prio?folder=nonesuch&file=a')).status, 404);
  t.same(calls, [
    ['bringToFront', ['f', 'a.txt']],
    ['pulling', ['f']],
    ['need', ['f', { page: 1, perpage: 65536 }]],
  ]);
});

t.test(
  'GET /rest/svc/report: the usage report’s preview, from the configuration and the counts',
  async (t) => {
    const status: Record<string, Record<string, number>> = {
      f: { localFiles: 3, localBytes: 5 * 1024 * 1024 },
      g: { localFiles: 7, localBytes: 1024 * 1024 },
    };
    const { model } = fakeModel({ folderStatus: (folder) => status[folder] ?? {} });
    const call = await setup(t, model);
    const report = (await call('GET', '/rest/svc/report')).json();
    t.match(report, {
      urVersion: 3,
      version: /^v\d/,
      platform: /^linux-/,
      numFolders: 2,
      numDevices: 2,
      totFiles: 10,
      folderMaxFiles: 7,
      totMiB: 6,
      folderMaxMiB: 5,
      folderUses: { sendreceive: 2 },
      deviceUses: { dynamicAddr: 2 },
      folderUsesV3: { pullOrder: { random: 2 } },
    });
    t.notOk('uniqueID' in report, 'no unique ID: syncd reports to no one');
    t.notOk('usesRateLimit' in report, 'empty fields left out, as Syncthing’s omitempty');
    const v1 = (await call('GET', '/rest/svc/report?version=1')).json();
    t.equal(v1.urVersion, 1);
    t.notOk('folderUses' in v1, 'version 1 has no version 2 fields');
    t.equal(
      (await call('GET', '/rest/svc/report?version=9')).json().urVersion,
      3,
      'a newer version: what is known',
    );
    t.equal((await call('GET', '/rest/svc/report?version=0')).status, 400);
    t.same(report.relays, {}, 'a nested report stays, empty, as Go writes a struct');
    // While the service changes hands: the configuration's counts, no files.
    const handover = await setup(t, undefined);
    t.match((await handover('GET', '/rest/svc/report')).json(), { numFolders: 2 });
  },
);

t.test('a restart unnoticed: a request waits for the model, or a stopping worker drops it', async (t) => {
  const { model } = fakeModel({ deviceStats: () => ({ answered: true }) });
  let held: SyncModel | undefined;
  let draining = false;
  const waiting: Array<(held: boolean) => void> = [];
  const local = localConfig(testConfiguration({ devices: [{ deviceID: peer }] }));
  const app = buildApp(
    appOptions({
      config: local.config,
      events: new EventLog(),
      model: () => held,
      whenHeld: () => new Promise((resolve) => waiting.push(resolve)),
      isDraining: () => draining,
    }),
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.teardown(() => app.close());
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/rest/stats/device`;
  const get = () => fetch(url, { headers: { 'x-api-key': testApiKey } });

  // A worker starting: held until the service is acquired, then answered.
  const early = get();
  await until(() => waiting.length === 1);
  held = model;
  waiting.shift()?.(true);
  const answered = await early;
  t.same([answered.status, await answered.json()], [200, { answered: true }]);

  // No service within the bound: 503, as before.
  held = undefined;
  const late = get();
  await until(() => waiting.length === 1);
  waiting.shift()?.(false);
  t.equal((await late).status, 503);

  // A worker stopping, the service gone: the connection is dropped unanswered, as Syncthing's restart.
  const dropped = get();
  await until(() => waiting.length === 1);
  draining = true;
  waiting.shift()?.(false);
  await t.rejects(dropped, { name: 'TypeError' }, 'fetch failed: the connection closed without an answer');
  t.rejects(get(), { name: 'TypeError' }, 'at once when already stopping');
});

async function until(test: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !test(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

t.test('/rest/debug: 403 until gui.debugging, then file, peerCompletion and profiles', async (t) => {
  const { model } = fakeModel({
    file: () => ({ global: record('a.txt'), local: record('a.txt'), holders: [peer] }),
    completion: (_folders, device) => ({ completion: device === peer ? 50.7 : 100 }) as never,
    connections: () => new Map([[peer, {} as never]]),
  });
  const local = localConfig(
    testConfiguration({
      devices: [{ deviceID: peer }],
      folders: [{ id: 'f', path: '/nowhere', devices: [{ deviceID: peer }] }],
    }),
  );
  const app = buildApp(appOptions({ config: local.config, events: new EventLog(), model: () => model }));
  await app.ready();
  t.teardown(() => app.close());
  const call = injector(app);
  for (const path of [
    '/rest/debug/file?folder=f&file=a.txt',
    '/rest/debug/peerCompletion',
    '/rest/debug/cpuprof',
  ]) {
    const refused = await call('GET', path);
    t.match([refused.status, refused.json()], [403, { code: 'SYNCD_ERR_DEBUGGING_DISABLED' }], path);
  }
  t.equal((await call('PATCH', '/rest/config/gui', { debugging: true })).status, 200, 'gui.debugging acts');
  t.match((await call('GET', '/rest/debug/file?folder=f&file=a.txt')).json(), {
    global: { name: 'a.txt' },
    local: { name: 'a.txt' },
    availability: [{ id: peer }],
  });
  t.same(
    (await call('GET', '/rest/debug/peerCompletion')).json(),
    { [peer]: 50, [testDeviceId]: 0 },
    'whole percents, this device as not connected, as Syncthing',
  );
  const profile = await app.inject({
    url: '/rest/debug/cpuprof?duration=100ms',
    headers: { 'x-api-key': testApiKey },
  });
  t.match(
    profile.headers['content-disposition'],
    /^attachment; filename=syncd-cpu-linux-\w+-.*\.cpuprofile$/,
  );
  t.match(JSON.parse(profile.body), { nodes: Array, startTime: Number, endTime: Number });
  t.equal((await call('GET', '/rest/debug/cpuprof?duration=forever')).status, 400);
  t.equal((await call('GET', '/rest/debug/support')).status, 501);
});
