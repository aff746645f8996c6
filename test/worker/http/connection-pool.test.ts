// The app on a real socket of its own: what only a connection shows (pipelining, the parser's own
// errors, slow readers).
import { connect, createServer, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import { RecentErrors } from '../../../shared/recent-errors.ts';
import { AuthFailures } from '../../../worker/http/auth-failures.ts';
import { appOptions, testApiKey } from '../../helpers/app.ts';
import { buildApp } from '../../../worker/http/app.ts';
import { ConnectionPool } from '../../../worker/http/connection-pool.ts';
import { localErrors } from '../../../worker/http/routes/system.ts';

const apiKey = testApiKey;

async function listening(
  t: Test,
  options: { draining?: boolean; errors?: RecentErrors; allowedHosts?: string[] } = {},
) {
  const errors = options.errors ?? new RecentErrors();
  const app = buildApp(
    appOptions({
      errors: localErrors(errors),
      isDraining: () => options.draining ?? false,
      authFailures: new AuthFailures({ limit: 1_000_000, globalLimit: 1_000_000 }),
      limits: { headersTimeoutMs: 1000, requestTimeoutMs: 1000 },
      allowedHosts: options.allowedHosts ?? null,
    }),
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.teardown(() => app.close());
  const { port } = app.server.address() as { port: number };
  return { app, port, errors };
}

/** Writes `text` on a new connection and collects everything the server sends until it closes. */
function exchange(port: number, text: string, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect({ port, host: '127.0.0.1' }, () => socket.write(text));
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
    setTimeout(() => socket.destroy(), timeoutMs).unref();
  });
}

const get = (path: string, extra = '') =>
  `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${apiKey}\r\n${extra}\r\n`;
const statuses = (received: string) => [...received.matchAll(/HTTP\/1\.1 (\d+) /g)].map((m) => m[1]);

t.test('requests pipelined behind a restart are answered before the connection closes', async (t) => {
  const { port } = await listening(t);
  const received = await exchange(
    port,
    `POST /rest/system/restart HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${apiKey}\r\nContent-Length: 0\r\n\r\n` +
      get('/rest/system/ping') +
      get('/rest/system/ping'),
  );
  t.same(statuses(received), ['200', '200', '200'], 'three requests, three answers');
  const closes = received.match(/^connection: close/gim) ?? [];
  t.equal(closes.length, 1, 'only the last answer closes');
  t.match(received, /\{"ping":"pong"\}$/, 'and it is the last one');
});

t.test('a draining worker answers every request pipelined on a connection, then closes it', async (t) => {
  const { port } = await listening(t, { draining: true });
  const received = await exchange(port, get('/rest/system/ping').repeat(5));
  t.same(statuses(received), ['200', '200', '200', '200', '200']);
  t.equal((received.match(/^connection: close/gim) ?? []).length, 1);
});

t.test('more than 100 header lines, however short, get 431 in the JSON shape', async (t) => {
  const { port } = await listening(t);
  let lines = '';
  for (let i = 0; i < 150; i++) lines += `X-H${i}: v\r\n`;
  // (Such an answer keeps the connection: asked to close it, not left to exchange's 5 s.)
  const received = await exchange(port, get('/rest/system/ping', `${lines}Connection: close\r\n`));
  t.match(received, /^HTTP\/1\.1 431 /);
  t.match(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4)), {
    statusCode: 431,
    error: 'Request Header Fields Too Large',
    message: /at most 100 lines/,
  });
  const many = 'X-Pad: ' + 'v'.repeat(150) + '\r\n';
  const tooLarge = await exchange(port, get('/rest/system/ping', `${many.repeat(99)}Connection: close\r\n`));
  t.match(tooLarge, /^HTTP\/1\.1 431 /, 'and more than 16 KiB in short lines');
});

t.test('requests the parser refuses get the same JSON error shape, and the connection closes', async (t) => {
  const { port } = await listening(t);
  const cases: Array<[string, string, number, RegExp]> = [
    ['a header of 20 KiB', get('/rest/system/ping', `X-Big: ${'a'.repeat(20_000)}\r\n`), 431, /16 KiB/],
    ['a malformed request line', 'NOT HTTP AT ALL\r\n\r\n', 400, /malformed request/],
    ['headers never finished', 'GET /rest/system/ping HTTP/1.1\r\nHost: 127.0.0.1\r\n', 408, /in time/],
  ];
  for (const [what, text, status, message] of cases) {
    const received = await exchange(port, text);
    t.match(received, new RegExp(`^HTTP/1\\.1 ${status} `), what);
    t.match(received, /content-type: application\/json; charset=utf-8/i, `${what}: JSON`);
    const body = JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4));
    t.same(Object.keys(body), ['statusCode', 'error', 'code', 'message'], `${what}: the documented shape`);
    t.match(body, { statusCode: status, message }, what);
  }
});

t.test('a client still sending when its error answer comes still reads the answer', async (t) => {
  // Closing a socket with unread input sends a reset, which drops what the client has not read yet:
  // a slowloris-like client dripping header bytes lost its 408 that way under load.
  const { port } = await listening(t);
  const socket: Socket = connect({ port, host: '127.0.0.1' });
  socket.on('error', () => {});
  t.teardown(() => socket.destroy());
  const closed = new Promise((resolve) => socket.once('close', resolve));
  socket.write('GET /rest/system/ping HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
  socket.pause();
  const drip = setInterval(() => !socket.destroyed && socket.write('a'), 50);
  // The headers timeout is 1 s, checked every second: answered within 2.5 s.
  await new Promise((resolve) => setTimeout(resolve, 2500));
  clearInterval(drip);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.resume();
  await closed;
  t.match(received, /^HTTP\/1\.1 408 /, 'the 408 was read');
  t.match(received, /"code":"SYNCD_ERR_REQUEST_TIMEOUT"/, 'with its body');
});

t.test('an unknown path under /rest/noauth/ is a 404 without a key; actions still need one', async (t) => {
  const { port } = await listening(t);
  const noKey = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`;
  t.match(await exchange(port, noKey('/rest/noauth/nothing')), /^HTTP\/1\.1 404 /);
  t.match(await exchange(port, noKey('/rest/noauth/../system/status')), /^HTTP\/1\.1 401 /);
  t.match(await exchange(port, noKey('/rest/noauth//x')), /^HTTP\/1\.1 401 /);
});

t.test('every spelling of the IPv6 loopback is a loopback Host', async (t) => {
  const app = buildApp(appOptions({ allowedHosts: ['localhost', '127.0.0.1', '[::1]'] }));
  t.teardown(() => app.close());
  for (const host of ['[0:0:0:0:0:0:0:1]', '[0:0:0:0:0:0:0:1]:8384', '[::0:1]', '[::1]:8384']) {
    const response = await app.inject({ url: '/rest/system/ping', headers: { host, 'x-api-key': apiKey } });
    t.equal(response.statusCode, 200, host);
  }
  const response = await app.inject({
    url: '/rest/system/ping',
    headers: { host: '[::2]', 'x-api-key': apiKey },
  });
  t.equal(response.statusCode, 403, '[::2] is not loopback');
});

t.test('the error list stays bounded by bytes, and reading it costs no serializing', async (t) => {
  const errors = new RecentErrors();
  const { port } = await listening(t, { errors });
  // 1,000 errors of 60 KiB of control characters: 6 bytes each in JSON, 360 MB if nothing bounded it.
  for (let i = 0; i < 1000; i++)
    errors.add({ when: new Date().toISOString(), message: '\u0001'.repeat(60 * 1024), level: 50 });
  const body = errors.body();
  t.ok(body.length <= 1024 * 1024, `the whole list is ${body.length} bytes`);
  t.equal(errors.body(), body, 'made once, shared by every reader');
  // Readers that never read: each holds the shared body, not a copy of its own.
  const before = process.memoryUsage().rss;
  const sockets: Socket[] = [];
  for (let i = 0; i < 16; i++) {
    const socket = connect({ port, host: '127.0.0.1' }, () => socket.write(get('/rest/system/error')));
    socket.pause();
    sockets.push(socket);
  }
  t.teardown(() => sockets.forEach((socket) => socket.destroy()));
  await new Promise((resolve) => setTimeout(resolve, 500));
  const grown = process.memoryUsage().rss - before;
  t.ok(grown < 64 * 1024 * 1024, `16 readers that never read cost ${Math.round(grown / 2 ** 20)} MB`);
  const started = performance.now();
  await exchange(port, get('/rest/system/ping', 'Connection: close\r\n'));
  t.ok(
    performance.now() - started < 3000,
    'and a ping is still answered (bounded generously, to catch a stall)',
  );
});

// GET /rest/system/ping is answered before Fastify when nothing is special about it (fastPing, server.ts):
// the same answer as Fastify's, and every check still made.
t.test('a ping answered before Fastify is the same answer, after the same checks', async (t) => {
  const { port } = await listening(t, { allowedHosts: ['127.0.0.1'] });
  const lines = (received: string) =>
    received
      .split('\r\n')
      .filter((line) => !/^(date|keep-alive|connection):/i.test(line))
      .join('\n');
  const fast = await exchange(port, get('/rest/system/ping', 'Connection: close\r\n'));
  const throughFastify = await exchange(
    port,
    `POST /rest/system/ping HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${apiKey}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
  );
  t.match(fast, /^HTTP\/1\.1 200 OK\r\n/);
  t.equal(lines(fast), lines(throughFastify), 'status, headers and body as Fastify sends them');
  t.match(fast, /\r\n\r\n\{"ping":"pong"\}$/);

  const wrongKey = await exchange(
    port,
    `GET /rest/system/ping HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: not-the-key\r\nConnection: close\r\n\r\n`,
  );
  t.match(wrongKey, /^HTTP\/1\.1 401 .*"code":"SYNCD_ERR_UNAUTHORIZED"/s, 'a wrong key: 401');
  const noKey = await exchange(
    port,
    `GET /rest/system/ping HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
  );
  t.match(noKey, /^HTTP\/1\.1 401 /, 'no key: 401');
  const foreignHost = await exchange(
    port,
    `GET /rest/system/ping HTTP/1.1\r\nHost: evil.example\r\nX-API-Key: ${apiKey}\r\nConnection: close\r\n\r\n`,
  );
  t.match(foreignHost, /^HTTP\/1\.1 403 /, 'a Host not allowed: 403');
  const manyHeaders = Array.from({ length: 120 }, (_, i) => `X-Filler-${i}: x\r\n`).join('');
  t.match(
    await exchange(port, get('/rest/system/ping', `${manyHeaders}Connection: close\r\n`)),
    /^HTTP\/1\.1 431 /,
    'too many headers: 431',
  );
});

t.test('pings pipelined behind a slower request are answered in order, the same', async (t) => {
  const { port } = await listening(t);
  const received = await exchange(
    port,
    get('/rest/system/status') + get('/rest/system/ping') + get('/rest/system/ping', 'Connection: close\r\n'),
  );
  t.same(statuses(received), ['200', '200', '200']);
  t.equal(received.match(/\{"ping":"pong"\}/g)?.length, 2);
});

t.test('a request that came while the draining worker was busy is answered, not reset', async (t) => {
  // The worker runs at low priority: starved past the idle grace, its event loop runs the expired
  // timer before it reads what arrived meanwhile. A connection closed with a request unread is reset.
  let draining = false;
  const app = buildApp(appOptions({ isDraining: () => draining }));
  await app.ready();
  t.teardown(() => app.close());
  const pool = new ConnectionPool(app.server);
  const server = createServer((socket) => pool.serve(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  const { port } = server.address() as { port: number };

  const socket: Socket = connect({ port, host: '127.0.0.1' });
  t.teardown(() => socket.destroy());
  let received = '';
  const errors: string[] = [];
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('error', (error: NodeJS.ErrnoException) => errors.push(error.code ?? error.message));
  const closed = new Promise((resolve) => socket.once('close', resolve));
  socket.write(get('/rest/system/ping'));
  await t.resolves(async () => {
    while (!received.includes('pong')) await new Promise((resolve) => setTimeout(resolve, 5));
  }, 'the first ping is answered, and the connection kept');

  draining = true;
  const drained = pool.drain({ idleGraceMs: 50, timeoutMs: 5000 });
  // Written after this turn's reads (in the check phase), then busy past the grace: the next turn
  // begins with the expired timer, the request still unread.
  setImmediate(() => {
    socket.write(get('/rest/system/ping'));
    const until = performance.now() + 200;
    while (performance.now() < until);
  });
  await closed;
  t.same(errors, [], 'no reset');
  t.same(statuses(received), ['200', '200'], 'both pings answered');
  t.match(received, /connection: close\r\n[^]*\{"ping":"pong"\}$/i, 'the second with Connection: close');
  t.same(await drained, { cut: 0 });
});
