import { Writable } from 'node:stream';
import t, { type Test } from 'tap';
import { createLogger } from '../../../shared/logger.ts';
import type { Action } from '../../../shared/ipc/protocol.ts';
import { buildApp } from '../../../worker/http/app.ts';
import { BODY_LIMIT } from '../../../worker/http/routes/system.ts';
import { AuthFailures } from '../../../worker/http/auth-failures.ts';
import { RecentErrors } from '../../../shared/recent-errors.ts';
import { appOptions, testApiKey } from '../../helpers/app.ts';
import { localErrors } from '../../../worker/http/routes/system.ts';

const apiKey = 'an-api-key-for-tests-0123456789';

/** A log destination that keeps every line in `lines`. */
function collect(lines: string[]): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
}

async function setup(
  t: Test,
  options: { draining?: boolean; authFailures?: AuthFailures; allowedHosts?: string[] | null } = {},
) {
  const errors = new RecentErrors();
  const actions: Action[] = [];
  const logLines: string[] = [];
  const logger = createLogger('worker', 'info', (error, slot) => errors.add(error, slot), collect(logLines));
  const app = buildApp({
    apiKey,
    logger,
    errors: localErrors(errors),
    status: {
      startTime: new Date(Date.now() - 5000),
      address: '127.0.0.1:8384',
      supervisor: () => ({ pid: 42, startTime: '2026-11-21T00:00:00.000Z', restarts: 2, crashes: 1 }),
    },
    onAction: (action) => actions.push(action),
    isDraining: () => options.draining ?? false,
    // Tests that send many wrong keys on purpose must not be slowed by the limiter; one test is about it.
    authFailures: options.authFailures ?? new AuthFailures({ limit: 1_000_000, globalLimit: 1_000_000 }),
    allowedHosts: options.allowedHosts ?? null,
  });
  await app.ready();
  t.teardown(() => app.close());
  const inject = (
    method: string,
    url: string,
    extra: { payload?: string | Buffer; headers?: Record<string, string>; remoteAddress?: string } = {},
  ) =>
    app.inject({
      method: method as 'GET',
      url,
      payload: extra.payload,
      headers: { 'x-api-key': apiKey, ...extra.headers },
      remoteAddress: extra.remoteAddress,
    });
  return { app, errors, actions, logLines, logger, inject };
}

t.test('ping answers pong to GET and POST with the JSON and cache headers', async (t) => {
  const { inject } = await setup(t);
  for (const method of ['GET', 'POST']) {
    const response = await inject(method, '/rest/system/ping');
    t.equal(response.statusCode, 200);
    t.same(response.json(), { ping: 'pong' });
    t.equal(response.headers['content-type'], 'application/json; charset=utf-8');
    t.equal(response.headers['cache-control'], 'no-cache, no-store');
  }
});

t.test('restart and shutdown answer first and report the action afterwards', async (t) => {
  const { inject, actions } = await setup(t);
  const restart = await inject('POST', '/rest/system/restart');
  t.equal(restart.statusCode, 200);
  t.same(restart.json(), { ok: 'restarting' });
  t.equal(restart.headers.connection, 'close', 'the client comes back on a new connection');
  const shutdown = await inject('POST', '/rest/system/shutdown');
  t.same(shutdown.json(), { ok: 'shutting down' });
  t.same(actions, ['restart', 'shutdown']);
});

t.test('action endpoints accept any body, any content type, and ignore queries', async (t) => {
  const { inject, actions } = await setup(t);
  const cases: Array<{ payload?: string; headers?: Record<string, string> }> = [
    {},
    { payload: '' },
    { payload: '', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
    { payload: '{not json', headers: { 'content-type': 'application/json' } },
    { payload: 'x', headers: { 'content-type': 'this is;;not=a "type' } },
    { payload: Buffer.from([0xff, 0xfe, 0x00]).toString('latin1'), headers: { 'content-type': 'image/png' } },
  ];
  for (const extra of cases) {
    const response = await inject('POST', '/rest/system/error/clear?force=1&x', extra);
    t.equal(response.statusCode, 200, `content type ${extra.headers?.['content-type']}`);
  }
  const restart = await inject('POST', '/rest/system/restart?delay=10', {
    payload: 'a=b',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.equal(restart.statusCode, 200);
  t.same(actions, ['restart']);
});

t.test('errors: post records trimmed text, get lists oldest first, clear empties', async (t) => {
  const { inject } = await setup(t);
  t.same((await inject('GET', '/rest/system/error')).json(), { errors: [] }, 'an empty list, never null');
  for (const text of ['  first\n', 'second']) {
    const response = await inject('POST', '/rest/system/error', {
      payload: text,
      headers: { 'content-type': 'text/plain' },
    });
    t.equal(response.statusCode, 200);
  }
  const { errors } = (await inject('GET', '/rest/system/error')).json();
  t.same(
    errors.map((e: { message: string }) => e.message),
    ['first', 'second'],
  );
  t.match(errors[0], { when: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/, level: 50 });
  t.equal((await inject('POST', '/rest/system/error/clear')).statusCode, 200);
  t.same((await inject('GET', '/rest/system/error')).json(), { errors: [] });
});

t.test('an empty error text is refused with 400 and records nothing', async (t) => {
  const { inject, errors } = await setup(t);
  for (const payload of [undefined, '', '   \n\t ']) {
    const response = await inject('POST', '/rest/system/error', { payload });
    t.equal(response.statusCode, 400, JSON.stringify(payload));
    t.match(response.json(), { statusCode: 400, error: 'Bad Request', message: /empty/ });
  }
  t.same(errors.list(), []);
});

t.test('an error text over 64 KiB is refused with 413 and records nothing', async (t) => {
  const { inject, errors } = await setup(t);
  const exactly = await inject('POST', '/rest/system/error', { payload: 'x'.repeat(BODY_LIMIT) });
  t.equal(exactly.statusCode, 200, '64 KiB is accepted');
  errors.clear();
  const over = await inject('POST', '/rest/system/error', { payload: 'x'.repeat(BODY_LIMIT + 1) });
  t.equal(over.statusCode, 413);
  t.equal(over.json().statusCode, 413);
  t.same(errors.list(), []);
});

t.test('an oversize body on an action endpoint gets 413 and the action is not taken', async (t) => {
  const { inject, actions } = await setup(t);
  const response = await inject('POST', '/rest/system/shutdown', { payload: 'x'.repeat(BODY_LIMIT + 1) });
  t.equal(response.statusCode, 413);
  t.same(actions, []);
});

t.test('status reports the worker, its address, memory and the supervisor', async (t) => {
  const { inject } = await setup(t);
  const status = (await inject('GET', '/rest/system/status')).json();
  t.equal(status.pid, process.pid);
  t.ok(status.uptime >= 4 && status.uptime <= 10, `uptime ${status.uptime}s`);
  t.ok(!Number.isNaN(Date.parse(status.startTime)));
  t.equal(status.guiAddressUsed, '127.0.0.1:8384');
  t.ok(status.memory.rss > 0 && status.memory.heapUsed > 0);
  t.same(status.supervisor, { pid: 42, startTime: '2026-11-21T00:00:00.000Z', restarts: 2, crashes: 1 });
});

t.test('health answers without a key', async (t) => {
  const { inject } = await setup(t);
  const response = await inject('GET', '/rest/noauth/health', { headers: { 'x-api-key': '' } });
  t.equal(response.statusCode, 200);
  t.same(response.json(), { status: 'OK' });
});

t.test('every other path needs the key, in either header', async (t) => {
  const { inject, actions } = await setup(t);
  const paths: Array<[string, string]> = [
    ['GET', '/rest/system/ping'],
    ['POST', '/rest/system/shutdown'],
    ['POST', '/rest/system/restart'],
    ['POST', '/rest/system/error/clear'],
    ['GET', '/rest/system/status'],
    ['GET', '/rest/unknown'],
    ['GET', '//rest/system/ping'],
    ['POST', '/rest/noauth/../system/shutdown'],
  ];
  const wrongs: Array<Record<string, string>> = [
    { 'x-api-key': '' },
    { 'x-api-key': 'wrong' },
    { 'x-api-key': `${apiKey}x` },
    { 'x-api-key': apiKey.slice(0, -1) },
    { 'x-api-key': '', authorization: `Basic ${apiKey}` },
    { 'x-api-key': '', authorization: 'Bearer nope' },
  ];
  for (const [method, path] of paths) {
    for (const headers of wrongs) {
      const response = await inject(method, path, { headers });
      t.equal(response.statusCode, 401, `${method} ${path} ${JSON.stringify(headers)}`);
      t.equal(response.headers['www-authenticate'], 'Bearer');
      t.match(response.json(), { statusCode: 401, error: 'Unauthorized', message: /API key/ });
    }
  }
  t.same(actions, [], 'no action taken');
  const bearer = await inject('GET', '/rest/system/ping', {
    headers: { 'x-api-key': '', authorization: `Bearer ${apiKey}` },
  });
  t.equal(bearer.statusCode, 200, 'Authorization: Bearer works');
  const lower = await inject('GET', '/rest/system/ping', {
    headers: { 'x-api-key': '', authorization: `bearer ${apiKey}` },
  });
  t.equal(lower.statusCode, 200, 'the scheme is case-insensitive');
});

t.test('unknown paths get 404 and wrong methods 405 with Allow', async (t) => {
  const { inject } = await setup(t);
  const unknown = await inject('GET', '/rest/system/nope');
  t.equal(unknown.statusCode, 404);
  t.match(unknown.json(), { statusCode: 404, error: 'Not Found', message: /\/rest\/system\/nope/ });
  t.equal(unknown.headers['content-type'], 'application/json; charset=utf-8');

  const wrong: Array<[string, string, string]> = [
    ['GET', '/rest/system/error/clear', 'POST'],
    ['PUT', '/rest/system/ping', 'GET, HEAD, POST'],
    ['GET', '/rest/system/restart', 'POST'],
    ['DELETE', '/rest/system/error?x=1', 'GET, HEAD, POST'],
  ];
  for (const [method, path, allow] of wrong) {
    const response = await inject(method, path);
    t.equal(response.statusCode, 405, `${method} ${path}`);
    t.equal(response.headers.allow, allow);
    t.equal(response.json().statusCode, 405);
  }
});

t.test('operations not built yet answer 501 and say so', async (t) => {
  const { inject, actions } = await setup(t);
  for (const [method, path] of [
    ['POST', '/rest/system/reset'],
    ['POST', '/rest/system/discovery'],
    ['GET', '/rest/system/discovery'],
  ]) {
    const response = await inject(method as string, path as string);
    t.equal(response.statusCode, 501, `${method} ${path}`);
    t.match(response.json(), { statusCode: 501, error: 'Not Implemented', message: /not implemented yet/ });
  }
  t.same(actions, []);
});

t.test('a stopping worker closes each connection after its response', async (t) => {
  const { inject } = await setup(t, { draining: true });
  const response = await inject('GET', '/rest/system/ping');
  t.equal(response.statusCode, 200);
  t.equal(response.headers.connection, 'close');
});

t.test('warnings and errors the worker logs enter the recent errors; info does not', async (t) => {
  const { inject, logger } = await setup(t);
  logger.info('routine');
  logger.warn('disk almost full');
  logger.error({ err: new Error('write failed') }, 'saving the index');
  const { errors } = (await inject('GET', '/rest/system/error')).json();
  t.same(
    errors.map((e: { message: string; level: number }) => [e.message, e.level]),
    [
      ['disk almost full', 40],
      ['saving the index: write failed', 50],
    ],
  );
});

t.test('a route that fails answers 500 without details and logs the cause', async (t) => {
  const { app, logLines } = await setup(t);
  await app.close();
  const logger = createLogger('worker', 'info', undefined, collect(logLines));
  const broken = buildApp({
    apiKey,
    logger,
    errors: localErrors(),
    status: {
      startTime: new Date(),
      address: 'x',
      supervisor: () => {
        throw new Error('stats unavailable');
      },
    },
    onAction: () => {},
    isDraining: () => false,
  });
  t.teardown(() => broken.close());
  const response = await broken.inject({
    method: 'GET',
    url: '/rest/system/status',
    headers: { 'x-api-key': apiKey },
  });
  t.equal(response.statusCode, 500);
  t.notMatch(response.body, /stats unavailable/, 'no internals in the answer');
  t.ok(
    logLines.some((line) => line.includes('stats unavailable')),
    'the cause is logged',
  );
});

t.test('the key never appears in a log line', async (t) => {
  const lines: string[] = [];
  const logger = createLogger('worker', 'info', undefined, collect(lines));
  logger.warn({ req: { headers: { 'x-api-key': apiKey, authorization: `Bearer ${apiKey}` } } }, 'a request');
  t.equal(lines.length, 1);
  t.notMatch(lines[0], apiKey);
});

t.test('a foreign Host is refused with 403 before the key is looked at, right key included', async (t) => {
  const { inject, actions } = await setup(t, { allowedHosts: ['localhost', '127.0.0.1', '[::1]'] });
  for (const path of ['/rest/system/shutdown', '/rest/system/restart', '/rest/system/error/clear']) {
    const response = await inject('POST', path, { headers: { host: 'rebound.evil.test:8384' } });
    t.equal(response.statusCode, 403, path);
    t.match(response.json(), {
      statusCode: 403,
      error: 'Forbidden',
      message: /Host "rebound.evil.test:8384" is not allowed/,
    });
  }
  t.equal(
    (await inject('GET', '/rest/noauth/health', { headers: { host: 'evil.test' } })).statusCode,
    403,
    'health too',
  );
  t.same(actions, [], 'no action taken');
  t.equal(
    (await inject('GET', '/rest/system/ping', { headers: { host: 'localhost:8384' } })).statusCode,
    200,
  );
});

t.test('no response lets another origin read it, preflights included', async (t) => {
  const { inject } = await setup(t);
  const origin = { origin: 'http://127.0.0.1:9999' };
  const preflight = await inject('OPTIONS', '/rest/system/shutdown', {
    headers: {
      ...origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'x-api-key',
      'x-api-key': '',
    },
  });
  t.ok(preflight.statusCode >= 400, `preflight refused: ${preflight.statusCode}`);
  for (const [method, path] of [
    ['GET', '/rest/system/ping'],
    ['POST', '/rest/system/error/clear'],
    ['GET', '/rest/noauth/health'],
  ]) {
    const response = await inject(method as string, path as string, { headers: origin });
    const corsHeaders = Object.keys(response.headers).filter((name) => name.startsWith('access-control-'));
    t.same(corsHeaders, [], `${method} ${path}`);
  }
  for (const name of Object.keys(preflight.headers)) t.notMatch(name, /^access-control-/);
});

t.test(
  'after 10 wrong keys in a minute a client gets 429 with Retry-After; the right key never does',
  async (t) => {
    const { inject, logLines } = await setup(t, { authFailures: new AuthFailures() });
    const wrong = { headers: { 'x-api-key': 'guess-guess-guess' } };
    for (let i = 0; i < 10; i++)
      t.equal((await inject('POST', '/rest/system/shutdown', wrong)).statusCode, 401);
    for (const headers of [wrong.headers, { 'x-api-key': '' }]) {
      const limited = await inject('POST', '/rest/system/shutdown', { headers });
      t.equal(limited.statusCode, 429);
      t.ok(Number(limited.headers['retry-after']) > 0 && Number(limited.headers['retry-after']) <= 60);
      t.match(limited.json(), { statusCode: 429, message: /try again in \d+ s/ });
    }
    t.equal((await inject('GET', '/rest/system/ping')).statusCode, 200, 'the key holder is never slowed');
    const warnings = logLines.filter((line) => line.includes('missing or wrong API key'));
    t.equal(warnings.length, 1, 'logged once per client per minute');
    t.match(JSON.parse(warnings[0] as string), { level: 40, client: '127.0.0.1' });
  },
);

t.test(
  'keyless requests from many loopback addresses neither push errors out nor get round the limit',
  async (t) => {
    const { inject, errors } = await setup(t, { authFailures: new AuthFailures() });
    errors.add({ when: new Date().toISOString(), message: 'disk on fire', level: 50 });
    const statuses = new Map<number, number>();
    for (let i = 0; i < 1100; i++) {
      const response = await app(inject, `127.0.${Math.floor(i / 250)}.${i % 250}`);
      statuses.set(response, (statuses.get(response) ?? 0) + 1);
    }
    t.equal(statuses.get(401), 10, 'all of loopback is one client: 10 tries');
    t.equal(statuses.get(429), 1090, 'then 429, whatever the address');
    const messages = errors.list().map((error) => error.message);
    t.equal(messages[0], 'disk on fire', 'the real error is still there');
    t.equal(messages.length, 2, 'and the failures take one entry');
    t.match(messages[1], /missing or wrong API key/);
  },
);

/** A keyless shutdown from `remoteAddress`; its status. */
async function app(
  inject: Awaited<ReturnType<typeof setup>>['inject'],
  remoteAddress: string,
): Promise<number> {
  const response = await inject('POST', '/rest/system/shutdown', {
    headers: { 'x-api-key': '' },
    remoteAddress,
  });
  return response.statusCode;
}

t.test('a wrong method on a parametric path gets 405 with Allow, as on a fixed one', async (t) => {
  const app = buildApp(appOptions());
  app.get('/rest/example/:id', async () => ({ ok: true }));
  app.delete('/rest/example/:id', async () => ({ ok: true }));
  await app.ready();
  t.teardown(() => app.close());
  const response = await app.inject({
    method: 'PUT',
    url: '/rest/example/7?x=1',
    headers: { 'x-api-key': testApiKey },
  });
  t.equal(response.statusCode, 405);
  t.equal(response.headers.allow, 'DELETE, GET, HEAD');
  t.match(response.json(), {
    code: 'SYNCD_ERR_METHOD_NOT_ALLOWED',
    message: /\/rest\/example\/7 does not accept PUT/,
  });
  t.equal((await app.inject({ url: '/rest/example', headers: { 'x-api-key': testApiKey } })).statusCode, 404);
});

t.test('every error has a stable code beside its status, one per kind', async (t) => {
  const { inject } = await setup(t);
  const cases: Array<[string, string, Record<string, string>, string | undefined, string]> = [
    ['GET', '/rest/system/nope', {}, undefined, 'SYNCD_ERR_NOT_FOUND'],
    ['GET', '/rest/system/restart', {}, undefined, 'SYNCD_ERR_METHOD_NOT_ALLOWED'],
    ['GET', '/rest/system/ping', { 'x-api-key': 'wrong' }, undefined, 'SYNCD_ERR_UNAUTHORIZED'],
    ['POST', '/rest/system/error', {}, '', 'SYNCD_ERR_EMPTY_ERROR_TEXT'],
    ['POST', '/rest/system/error', {}, 'x'.repeat(BODY_LIMIT + 1), 'SYNCD_ERR_BODY_TOO_LARGE'],
    ['POST', '/rest/system/reset', {}, undefined, 'SYNCD_ERR_NOT_IMPLEMENTED'],
  ];
  for (const [method, path, headers, payload, code] of cases) {
    const response = await inject(method, path, { headers, payload });
    t.equal(response.json().code, code, `${method} ${path}`);
  }
});

t.test("the raw-body rule and the 64 KiB limit are the actions' own: other routes parse JSON", async (t) => {
  const app = buildApp(appOptions());
  app.post('/rest/example', async (request) => ({ got: request.body }));
  await app.ready();
  t.teardown(() => app.close());
  const headers = { 'x-api-key': testApiKey, 'content-type': 'application/json' };
  const parsed = await app.inject({ method: 'POST', url: '/rest/example', headers, payload: '{"a":1}' });
  t.same(parsed.json(), { got: { a: 1 } }, 'a JSON body is parsed');
  const large = await app.inject({
    method: 'POST',
    url: '/rest/example',
    headers,
    payload: JSON.stringify({ a: 'x'.repeat(BODY_LIMIT * 2) }),
  });
  t.equal(large.statusCode, 200, "and may be larger than an action's");
  const malformed = await app.inject({ method: 'POST', url: '/rest/example', headers, payload: '{not json' });
  t.match(malformed.json(), { statusCode: 400, code: 'SYNCD_ERR_BAD_REQUEST' });
});
