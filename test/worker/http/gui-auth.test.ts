// The web GUI's way in (CSRF token, login, sessions) and its files served from a folder, as
// Syncthing's GUI uses them, in-process: the app through inject(), real bcrypt, a real folder.
import t, { type Test } from 'tap';
import { buildApp } from '../../../worker/http/app.ts';
import { GuiTokens } from '../../../worker/http/gui-tokens.ts';
import { MAX_QR_TEXT } from '../../../worker/http/routes/gui-pages.ts';
import { appOptions, testApiKey } from '../../helpers/app.ts';
import { localConfig, testDeviceId } from '../../helpers/config.ts';

const short = testDeviceId.slice(0, 5);
const csrfCookie = `CSRF-Token-${short}`;
const sessionCookie = `sessionid-${short}`;
const REMOTE = '192.0.2.7';

async function setup(t: Test, layout: 'themed' | 'flat' = 'themed') {
  const files = { 'index.html': '<html>the GUI</html>', assets: { css: { 'theme.css': 'default theme' } } };
  const root = t.testdir(
    layout === 'themed'
      ? { default: files, dark: { assets: { css: { 'theme.css': 'dark theme' } } } }
      : files,
  );
  const local = localConfig();
  const app = buildApp(
    appOptions({ deviceId: testDeviceId, guiSecret: 'a device key', guiAssets: root, config: local.config }),
  );
  await app.ready();
  t.teardown(() => app.close());
  type Options = { headers?: Record<string, string>; remote?: string; body?: unknown };
  const call = (method: string, url: string, options: Options = {}) =>
    app.inject({
      method: method as 'GET',
      url,
      remoteAddress: options.remote ?? '127.0.0.1',
      headers: {
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
      payload: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  const withKey = (method: string, url: string, body?: unknown) =>
    call(method, url, { headers: { 'x-api-key': testApiKey }, body });
  return { call, withKey, config: local.config };
}

const cookieOf = (response: { headers: Record<string, unknown> }, name: string) => {
  const set = [response.headers['set-cookie'] ?? []].flat() as string[];
  const line = set.find((cookie) => cookie.startsWith(`${name}=`));
  return line?.split(';', 1)[0]?.slice(name.length + 1);
};
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

t.test('GuiTokens: made here, for one kind and binding, until they expire', async (t) => {
  let now = 1_000_000;
  const tokens = new GuiTokens('secret', () => now);
  const csrf = tokens.make('csrf');
  t.ok(tokens.valid('csrf', csrf));
  t.notOk(tokens.valid('session', csrf), 'not as another kind');
  t.notOk(new GuiTokens('other secret', () => now).valid('csrf', csrf), 'not under another key');
  t.notOk(tokens.valid('csrf', `${csrf.slice(0, -1)}${csrf.endsWith('A') ? 'B' : 'A'}`), 'not altered');
  const session = tokens.make('session', 'user\0hash');
  t.ok(tokens.valid('session', session, 'user\0hash'));
  t.notOk(tokens.valid('session', session, 'user\0another hash'), 'not once the password changed');
  now += 8 * 24 * 3600 * 1000;
  t.notOk(tokens.valid('session', session, 'user\0hash'), 'a session lasts a week');
  t.ok(tokens.valid('csrf', csrf), 'a CSRF token a month');
  for (const bad of [undefined, '', 'a.b', 'x'.repeat(300)]) t.notOk(tokens.valid('csrf', bad));
});

t.test('without a GUI password: pages and their CSRF token for this machine only', async (t) => {
  const { call } = await setup(t);
  const page = await call('GET', '/');
  t.equal(page.statusCode, 200);
  t.equal(page.body, '<html>the GUI</html>');
  t.equal(page.headers['x-frame-options'], 'SAMEORIGIN');
  const token = cookieOf(page, csrfCookie);
  t.ok(token, 'the CSRF cookie comes with the page');
  const again = await call('GET', '/', { headers: { cookie: `${csrfCookie}=${token}` } });
  t.equal(cookieOf(again, csrfCookie), undefined, 'a good token is kept');

  const status = await call('GET', '/rest/system/version', {
    headers: { [`X-CSRF-Token-${short}`]: token! },
  });
  t.equal(status.statusCode, 200, 'the token lets the GUI call the API');
  t.equal((await call('GET', '/rest/system/version')).statusCode, 401, 'nothing: the key is asked for');
  // However the path is spelt, an action is routed as /rest and needs the token as /rest does.
  for (const path of [
    '/%72est/system/restart',
    '/%72%65st/system/shutdown',
    '/rest/../rest/system/shutdown',
  ]) {
    const sneaked = await call('POST', path);
    t.not(sneaked.statusCode, 200, `${path}: ${sneaked.statusCode}`);
    t.not(sneaked.statusCode, 500);
  }
  const forged = await call('GET', '/rest/system/version', {
    headers: { [`X-CSRF-Token-${short}`]: 'forged.0.x' },
  });
  t.equal(forged.statusCode, 401);

  const remote = await call('GET', '/', { remote: REMOTE });
  t.equal(remote.statusCode, 403);
  t.match(remote.json(), { code: 'SYNCD_ERR_GUI_LOCAL_ONLY', message: /set gui.user and gui.password/ });
  const remoteApi = await call('GET', '/rest/system/version', {
    remote: REMOTE,
    headers: { [`X-CSRF-Token-${short}`]: token! },
  });
  t.equal(remoteApi.statusCode, 403, 'a token carried elsewhere does not let another machine in');
});

t.test('with a GUI password: Basic login, a session, the 2.x login form, rate limited', async (t) => {
  const { call, withKey, config } = await setup(t);
  t.equal(
    (await withKey('PATCH', '/rest/config/gui', { user: 'admin', password: 'correct horse' })).statusCode,
    200,
  );
  const stored = config.current.gui.password;
  t.match(stored, /^\$2[aby]\$10\$/, 'the password is stored as its bcrypt hash');
  t.equal((await withKey('PATCH', '/rest/config/gui', { theme: 'dark', password: stored })).statusCode, 200);
  t.equal(config.current.gui.password, stored, 'the hash sent back is kept as it is');
  const whole = structuredClone(config.current);
  whole.gui.password = 'correct horse';
  t.equal((await withKey('PUT', '/rest/config', whole)).statusCode, 200, 'a whole configuration too');
  t.not(config.current.gui.password, stored, 'hashed anew');
  t.match(config.current.gui.password, /^\$2[aby]\$10\$/);

  const asked = await call('GET', '/', { remote: REMOTE });
  t.equal(asked.statusCode, 401);
  t.equal(asked.headers['www-authenticate'], 'Basic realm="Authorization Required"', 'the browser asks');
  const good = await call('GET', '/', {
    remote: REMOTE,
    headers: { authorization: basic('admin', 'correct horse') },
  });
  t.equal(good.statusCode, 200);
  const session = cookieOf(good, sessionCookie);
  const token = cookieOf(good, csrfCookie);
  t.ok(session && token);
  const cookies = `${sessionCookie}=${session}; ${csrfCookie}=${token}`;
  const api = await call('GET', '/rest/system/version', {
    remote: REMOTE,
    headers: { cookie: cookies, [`X-CSRF-Token-${short}`]: token! },
  });
  t.equal(api.statusCode, 200, 'the session and the token let the GUI in');
  const noToken = await call('GET', '/rest/system/version', { remote: REMOTE, headers: { cookie: cookies } });
  t.equal(noToken.statusCode, 401, 'a session without the CSRF token is not enough');
  const metrics = await call('GET', '/metrics', { remote: REMOTE, headers: { cookie: cookies } });
  t.equal(metrics.statusCode, 200, '/metrics, as Syncthing’s, needs the session but no CSRF token');
  t.equal((await call('GET', '/metrics', { remote: REMOTE })).statusCode, 401, 'and not without it');

  const form = await call('POST', '/rest/noauth/auth/password', {
    remote: REMOTE,
    body: { username: 'admin', password: 'correct horse', stayLoggedIn: true },
  });
  t.equal(form.statusCode, 204);
  t.match(form.headers['set-cookie'], /sessionid-\w+=.*HttpOnly; SameSite=Strict; Max-Age=604800/);
  const wrongForm = await call('POST', '/rest/noauth/auth/password', {
    remote: REMOTE,
    body: { username: 'admin', password: 'wrong' },
  });
  t.match([wrongForm.statusCode, wrongForm.json().code], [403, 'SYNCD_ERR_LOGIN_FAILED']);
  t.equal(
    (await call('POST', '/rest/noauth/auth/logout')).headers['set-cookie']?.toString().includes('Max-Age=0'),
    true,
  );

  // A new password ends the sessions opened with the old one.
  t.equal((await withKey('PATCH', '/rest/config/gui', { password: 'new one' })).statusCode, 200);
  const old = await call('GET', '/', { remote: REMOTE, headers: { cookie: cookies } });
  t.equal(old.statusCode, 401);

  // Wrong passwords are counted with wrong keys: past ten a minute, 429.
  let last = 0;
  for (let i = 0; i < 10 && last !== 429; i++) {
    last = (
      await call('GET', '/', { remote: REMOTE, headers: { authorization: basic('admin', `guess ${i}`) } })
    ).statusCode;
  }
  const limited = await call('GET', '/', {
    remote: REMOTE,
    headers: { authorization: basic('admin', 'new one') },
  });
  t.equal(limited.statusCode, 429, 'even the right password waits');
  const limitedForm = await call('POST', '/rest/noauth/auth/password', {
    remote: REMOTE,
    body: { username: 'admin', password: 'new one' },
  });
  t.equal(limitedForm.statusCode, 429);
  t.equal((await withKey('GET', '/rest/system/version')).statusCode, 200, 'the key is never slowed');
});

t.test('the files: themes as Syncthing lays them out, meta.js, themes.json, QR codes', async (t) => {
  const { withKey, config } = await setup(t);
  t.equal((await withKey('GET', '/assets/css/theme.css')).body, 'default theme');
  t.equal((await withKey('GET', '/theme-assets/dark/assets/css/theme.css')).body, 'dark theme');
  await config.change((draft) => {
    draft.gui.theme = 'dark';
    draft.gui.insecureAllowFrameLoading = true;
  });
  const dark = await withKey('GET', '/assets/css/theme.css');
  t.equal(dark.body, 'dark theme', 'the configured theme first');
  t.match(dark.headers['content-type'], /^text\/css/);
  t.equal(dark.headers['x-frame-options'], undefined, 'insecureAllowFrameLoading acts');
  t.equal((await withKey('GET', '/index.html')).body, '<html>the GUI</html>', 'then the default theme');
  t.same((await withKey('GET', '/themes.json')).json(), { themes: ['dark', 'default'] });
  const meta = await withKey('GET', '/meta.js');
  t.equal(
    meta.body,
    `var metadata = {"deviceID":"${testDeviceId}","deviceIDShort":"${short}","authenticated":true};\n`,
  );
  const qr = await withKey('GET', `/qr/?text=${testDeviceId}`);
  t.equal(qr.headers['content-type'], 'image/png');
  t.same(qr.rawPayload.subarray(0, 8), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  t.equal((await withKey('GET', `/qr/?text=${'x'.repeat(MAX_QR_TEXT + 1)}`)).statusCode, 400);
  for (const path of [
    '/nonesuch.js',
    '/../../etc/passwd',
    '/%2e%2e/%2e%2e/etc/passwd',
    '/theme-assets/x',
    '/a%00b',
  ]) {
    t.equal((await withKey('GET', path)).statusCode, 404, path);
  }
  const api = await withKey('GET', '/rest/nonesuch');
  t.match([api.statusCode, api.json().code], [404, 'SYNCD_ERR_NOT_FOUND'], 'an unknown endpoint is no page');
});

t.test('a folder without theme folders is served as it is', async (t) => {
  const { withKey } = await setup(t, 'flat');
  t.equal((await withKey('GET', '/')).body, '<html>the GUI</html>');
  t.equal((await withKey('GET', '/assets/css/theme.css')).body, 'default theme');
});

t.test('guesses sent side by side meet the limit as guesses one by one do', async (t) => {
  const { call, withKey } = await setup(t);
  t.equal(
    (await withKey('PATCH', '/rest/config/gui', { user: 'admin', password: 'correct horse' })).statusCode,
    200,
  );
  const answers = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      call('POST', '/rest/noauth/auth/password', {
        remote: REMOTE,
        body: { username: 'admin', password: `g${i}` },
      }),
    ),
  );
  const statuses = answers.map((answer) => answer.statusCode);
  t.ok(
    statuses.every((status) => status === 403 || status === 429),
    'refused, or told to wait',
  );
  t.ok(statuses.filter((status) => status === 403).length <= 10, `at most 10 checked: ${statuses.join(' ')}`);
});

t.test('without --gui-assets no CSRF token or GUI login lets in: the key alone does', async (t) => {
  const app = buildApp(
    appOptions({ deviceId: testDeviceId, guiSecret: 'a device key', config: localConfig().config }),
  );
  await app.ready();
  t.teardown(() => app.close());
  const token = new GuiTokens('a device key').make('csrf');
  const answer = await app.inject({
    url: '/rest/system/version',
    headers: { [`X-CSRF-Token-${short}`]: token },
  });
  t.equal(answer.statusCode, 401);
  t.equal(
    (await app.inject({ method: 'POST', url: '/rest/noauth/auth/password' })).statusCode,
    404,
    'no login form',
  );
});
