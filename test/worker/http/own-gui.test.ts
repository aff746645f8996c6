// syncd's own web GUI at / (routes/own-gui.ts) and its way in (gui-auth.ts with loginForm), in-process:
// the app through inject(), a folder laid out as the build lays out dist/gui, real bcrypt.
import t, { type Test } from 'tap';
import { buildApp } from '../../../worker/http/app.ts';
import { appOptions, testApiKey } from '../../helpers/app.ts';
import { localConfig, testDeviceId } from '../../helpers/config.ts';

const short = testDeviceId.slice(0, 5);
const csrfCookie = `CSRF-Token-${short}`;
const sessionCookie = `sessionid-${short}`;

async function setup(
  t: Test,
  files: Record<string, string> = { 'index.html': '<html>syncd</html>', 'app.js': 'go()' },
) {
  const root = t.testdir(files);
  const local = localConfig();
  const app = buildApp(
    appOptions({
      deviceId: testDeviceId,
      guiSecret: 'a device key',
      guiAssets: root,
      ownGui: true,
      config: local.config,
      status: {
        startTime: new Date(),
        address: '127.0.0.1:8384',
        // The supervisor is played by this process: its usage is read from /proc like the real one's.
        supervisor: () => ({ pid: process.pid, startTime: '', restarts: 0, crashes: 0 }),
      },
    }),
  );
  await app.ready();
  t.teardown(() => app.close());
  const call = (method: string, url: string, headers: Record<string, string> = {}, body?: unknown) =>
    app.inject({
      method: method as 'GET',
      url,
      remoteAddress: '127.0.0.1',
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
  return { call, root };
}

const cookieOf = (response: { headers: Record<string, unknown> }, name: string) => {
  const set = [response.headers['set-cookie'] ?? []].flat() as string[];
  return set
    .find((cookie) => cookie.startsWith(`${name}=`))
    ?.split(';', 1)[0]
    ?.slice(name.length + 1);
};

t.test('the GUI files: its page at /, types, ETags, the CSRF cookie and the page headers', async (t) => {
  const { call } = await setup(t);
  const page = await call('GET', '/');
  t.equal(page.statusCode, 200);
  t.equal(page.body, '<html>syncd</html>');
  t.match(page.headers['content-type'], /^text\/html/);
  t.equal(page.headers['x-frame-options'], 'SAMEORIGIN');
  t.equal(page.headers['x-content-type-options'], 'nosniff');
  t.ok(cookieOf(page, csrfCookie), 'the CSRF cookie comes with the page');
  t.equal(page.headers['cache-control'], 'no-cache', 'asked again at each load');
  t.match(page.headers['content-security-policy'], /default-src 'self'/);
  // No GUI password: the token, which any local process can take from a page, lets nobody in.
  const token = cookieOf(page, csrfCookie) as string;
  const withToken = await call('GET', '/rest/system/status', {
    cookie: `${csrfCookie}=${token}`,
    [`x-csrf-token-${short}`]: token,
  });
  t.equal(withToken.statusCode, 403);
  t.equal(withToken.json().code, 'SYNCD_ERR_API_KEY_NEEDED', 'the page is told to log in with the key');
  t.equal((await call('GET', '/rest/system/status', { 'x-api-key': testApiKey })).statusCode, 200);
  const script = await call('GET', '/app.js');
  t.match(script.headers['content-type'], /^application\/javascript/);
  t.equal(script.body, 'go()');
  const again = await call('GET', '/app.js', { 'if-none-match': String(script.headers.etag) });
  t.equal(again.statusCode, 304, 'an unchanged file is not sent again');
  for (const path of ['/nothing.js', '/../package.json', '/%2e%2e/package.json', '/.env']) {
    const missing = await call('GET', path);
    t.equal(missing.statusCode, 404, `${path}: 404`);
    t.equal(missing.json().code, 'SYNCD_ERR_NOT_FOUND');
  }
  const api = await call('GET', '/rest/nothing', { 'x-api-key': testApiKey });
  t.equal(api.json().message, 'no such endpoint: GET /rest/nothing', 'under /rest an API 404, never a page');
});

t.test('a GUI not built: 503 naming the build', async (t) => {
  const { call } = await setup(t, { 'readme.txt': 'no page here' });
  const page = await call('GET', '/');
  t.equal(page.statusCode, 503);
  t.equal(page.json().code, 'SYNCD_ERR_GUI_NOT_BUILT');
  t.match(page.json().message, /npm run build/);
});

t.test('with a GUI password: the files load, calls need a session and never ask for Basic', async (t) => {
  const { call } = await setup(t);
  const set = await call(
    'PATCH',
    '/rest/config/gui',
    { 'x-api-key': testApiKey },
    { user: 'admin', password: 'correct horse' },
  );
  t.equal(set.statusCode, 200);
  const page = await call('GET', '/');
  t.equal(page.statusCode, 200, 'the page loads before the login: it holds the login form');
  const token = cookieOf(page, csrfCookie) as string;
  const csrf = { cookie: `${csrfCookie}=${token}`, [`x-csrf-token-${short}`]: token };
  const refused = await call('GET', '/rest/system/status', csrf);
  t.equal(refused.statusCode, 403);
  t.equal(refused.json().code, 'SYNCD_ERR_NOT_LOGGED_IN');
  t.equal(refused.headers['www-authenticate'], undefined, 'no Basic prompt for the page to fight');
  t.equal((await call('GET', '/meta.js', csrf)).statusCode, 403, 'the device ID needs a session');
  t.equal((await call('GET', `/qr/?text=${testDeviceId}`, csrf)).statusCode, 403, 'so does its QR code');
  const wrong = await call('POST', '/rest/noauth/auth/password', {}, { username: 'admin', password: 'nope' });
  t.equal(wrong.statusCode, 403);
  const login = await call(
    'POST',
    '/rest/noauth/auth/password',
    {},
    { username: 'admin', password: 'correct horse' },
  );
  t.equal(login.statusCode, 204);
  const session = cookieOf(login, sessionCookie);
  t.ok(session, 'a session cookie');
  const admitted = await call('GET', '/rest/system/status', {
    ...csrf,
    cookie: `${csrfCookie}=${token}; ${sessionCookie}=${session}`,
  });
  t.equal(admitted.statusCode, 200);
  const { usage } = admitted.json();
  t.ok(usage.worker.cpuSeconds > 0 && usage.worker.rss > 0, 'the worker’s CPU time and memory');
  t.equal(usage.supervisor.pid, process.pid);
  t.ok(usage.supervisor.cpuSeconds > 0 && usage.supervisor.rss > 0, 'the supervisor’s, from /proc');
  t.ok(Date.parse(usage.at) > 0, 'when they were read');
  const basic = `Basic ${Buffer.from('admin:correct horse').toString('base64')}`;
  const byBasic = await call('GET', '/rest/system/status', { ...csrf, authorization: basic });
  t.equal(byBasic.statusCode, 200, 'a client that sends Basic itself still gets in');
});
