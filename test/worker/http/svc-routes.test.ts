// Syncthing's /rest/svc helpers and its upgrade answer, as its GUI calls them, in-process.
import t, { type Test } from 'tap';
import { buildApp } from '../../../worker/http/app.ts';
import { MAX_RANDOM_LENGTH } from '../../../worker/http/routes/svc.ts';
import { appOptions, injector, testApiKey } from '../../helpers/app.ts';
import { newDeviceId } from '../../helpers/config.ts';

async function setup(t: Test) {
  const app = buildApp(appOptions());
  await app.ready();
  t.teardown(() => app.close());
  return { app, call: injector(app) };
}

t.test('GET /rest/svc/random/string: Syncthing’s alphabet, 32 by default, bounded', async (t) => {
  const { call } = await setup(t);
  const ten = (await call('GET', '/rest/svc/random/string?length=10')).json();
  t.same(Object.keys(ten), ['random']);
  t.match(ten.random, /^[2-79a-km-zA-HJ-NP-Z]{10}$/);
  for (const query of ['', '?length=0', '?length=-3', '?length=x']) {
    t.equal((await call('GET', `/rest/svc/random/string${query}`)).json().random.length, 32, query);
  }
  const many = new Set<string>();
  for (let i = 0; i < 20; i++) many.add((await call('GET', '/rest/svc/random/string')).json().random);
  t.equal(many.size, 20, 'a new string each time');
  const joined = [...many].join('');
  t.notMatch(joined, /[01l8IOB]/, 'none of the characters that read alike');
  t.equal(
    (await call('GET', `/rest/svc/random/string?length=${MAX_RANDOM_LENGTH}`)).json().random.length,
    MAX_RANDOM_LENGTH,
  );
  const tooLong = await call('GET', `/rest/svc/random/string?length=${MAX_RANDOM_LENGTH + 1}`);
  t.equal(tooLong.status, 400);
  t.match(tooLong.json(), { code: 'SYNCD_ERR_INVALID_QUERY', message: /length must be at most 4096/ });
});

t.test('GET /rest/svc/deviceid: the canonical ID, or the problem, always 200', async (t) => {
  const { call } = await setup(t);
  const id = newDeviceId();
  const plain = id.replaceAll('-', '').toLowerCase();
  const good = await call('GET', `/rest/svc/deviceid?id=${plain}`);
  t.same([good.status, good.json()], [200, { id }]);
  const short = await call('GET', '/rest/svc/deviceid?id=abc');
  t.same(
    [short.status, short.json()],
    [200, { error: '"abc": a device ID has 56 characters (63 with its dashes), not 3' }],
  );
  const typo = `${id.slice(0, 2)}${id[2] === 'A' ? 'B' : 'A'}${id.slice(3)}`;
  t.match((await call('GET', `/rest/svc/deviceid?id=${typo}`)).json(), { error: /check character/ });
  t.same((await call('GET', '/rest/svc/deviceid')).json(), { id: '' }, 'nothing given: as Syncthing');
});

t.test('GET /rest/svc/lang: the browser’s languages, lower-cased, in order', async (t) => {
  const { app } = await setup(t);
  const lang = async (header?: string) =>
    (
      await app.inject({
        url: '/rest/svc/lang',
        headers: { 'x-api-key': testApiKey, ...(header === undefined ? {} : { 'accept-language': header }) },
      })
    ).json();
  t.same(await lang('en-US,en;q=0.9,fr'), ['en-us', 'en', 'fr']);
  t.same(await lang('de-CH; q=0.8 , nl'), ['de-ch', 'nl']);
  t.same(await lang(), [''], 'none: as Syncthing');
});

t.test('upgrades: unsupported, as Syncthing’s packaged builds answer', async (t) => {
  const { call } = await setup(t);
  for (const method of ['GET', 'POST']) {
    const response = await call(method, '/rest/system/upgrade');
    t.equal(response.status, 500, method);
    t.match(response.json(), { code: 'SYNCD_ERR_UPGRADE_UNSUPPORTED', message: /^upgrade unsupported/ });
  }
});

t.test('the helpers need the key', async (t) => {
  const { app } = await setup(t);
  for (const url of ['/rest/svc/random/string', '/rest/svc/deviceid?id=x', '/rest/svc/lang']) {
    t.equal((await app.inject({ url })).statusCode, 401, url);
  }
});

t.test('GET /rest/system/paths: the files kept, by Syncthing 2.x’s names', async (t) => {
  const app = buildApp(
    appOptions({ paths: { config: '/home/x/config.json', database: '/home/x/index.sqlite' } }),
  );
  await app.ready();
  t.teardown(() => app.close());
  t.same((await injector(app)('GET', '/rest/system/paths')).json(), {
    config: '/home/x/config.json',
    database: '/home/x/index.sqlite',
  });
});
