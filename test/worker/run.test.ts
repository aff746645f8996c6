// The worker's side of the IPC channel, in-process: a fake parent plays the supervisor.
import { EventEmitter } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import type { SupervisorMessage, WorkerInit, WorkerMessage } from '../../shared/ipc/protocol.ts';
import { runWorker } from '../../worker/run.ts';
import { testConfiguration } from '../helpers/config.ts';
import { testDevice } from '../helpers/device.ts';

const { cert, key } = await testDevice();

const apiKey = 'a-key-for-the-worker-tests';

const init: WorkerInit = {
  settings: {
    logLevel: 'silent',
    drainTimeoutMs: 2000,
    headersTimeoutMs: 5000,
    requestTimeoutMs: 5000,
    maxConnections: 10,
  },
  apiKey,
  deviceId: 'RFR5QYV-USWWDUL-HS54SQX-PPBXXJW-ARCNP65-74JIARS-VVIDBEL-STAQAQG',
  address: '127.0.0.1:1',
  errors: [{ when: '2026-11-22T00:00:00.000Z', message: 'from an earlier worker', level: 50 }],
  allowedHosts: null,
  tls: null,
  supervisor: { pid: 1, startTime: '2026-11-22T00:00:00.000Z', restarts: 0, crashes: 0 },
  home: '/nowhere',
  config: testConfiguration(),
  configRevision: 1,
  overridden: { guiAddress: false, apiKey: false, tls: false },
  sync: {},
  device: { cert, key },
  announce: { local: null, global: null },
  eventIdBase: 0,
};

/** A parent channel: what the worker sends, and a way to send it messages with handles. */
function parent(t: Test) {
  const channel = new EventEmitter();
  const received: WorkerMessage[] = [];
  const waiters: Array<{ match: (m: WorkerMessage) => boolean; found: (m: WorkerMessage) => void }> = [];
  const port = {
    connected: true,
    send: (message: WorkerMessage, callback?: (error: Error | null) => void) => {
      received.push(message);
      callback?.(null);
      for (const waiter of waiters.splice(0)) {
        if (waiter.match(message)) waiter.found(message);
        else waiters.push(waiter);
      }
    },
    on: (event: 'message', listener: (message: unknown, handle: unknown) => void) =>
      channel.on(event, listener),
  };
  const tell = (message: SupervisorMessage, handle?: unknown) => channel.emit('message', message, handle);
  const next = <T extends WorkerMessage['type']>(type: T) =>
    new Promise<Extract<WorkerMessage, { type: T }>>((resolve) => {
      const seen = received.find((m) => m.type === type);
      if (seen) return resolve(seen as Extract<WorkerMessage, { type: T }>);
      waiters.push({
        match: (m) => m.type === type,
        found: (m) => resolve(m as Extract<WorkerMessage, { type: T }>),
      });
    });
  const stopped = runWorker(port, { testRoutes: true });
  t.teardown(async () => {
    tell({ type: 'syncd:drain', reason: 'shutdown' });
    await stopped;
  });
  return { tell, next, received, stopped };
}

/** The two ends of a real TCP connection: the server's, to hand over, and the client's. */
async function connectionPair(t: Test): Promise<{ handed: Socket; client: Socket }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const handed = new Promise<Socket>((resolve) => server.once('connection', resolve));
  const client = connect((server.address() as { port: number }).port, '127.0.0.1');
  await new Promise((resolve) => client.once('connect', resolve));
  return { handed: await handed, client };
}

t.test('messages before init go unanswered; after it, each is answered in order', async (t) => {
  const { tell, next, received } = parent(t);
  tell({ type: 'syncd:heartbeat', seq: 1 });
  tell({ type: 'syncd:init', init });
  tell({ type: 'syncd:heartbeat', seq: 2 });
  await next('syncd:ready');
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.same(
    received.filter((m) => m.type === 'syncd:heartbeat').map((m) => (m as { seq: number }).seq),
    [2],
    'a heartbeat before init is not one the worker could answer: dropped; the one after, answered',
  );
});

t.test('a connection handed over is acknowledged with its seq and served', async (t) => {
  const { tell, next, received } = parent(t);
  tell({ type: 'syncd:init', init });
  await next('syncd:ready');
  const { handed, client } = await connectionPair(t);
  tell({ type: 'syncd:connection', seq: 7, listener: 'gui' }, handed);
  t.same(await next('syncd:accepted'), { type: 'syncd:accepted', seq: 7, listener: 'gui' });
  client.write(
    `GET /rest/system/ping HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${apiKey}\r\nConnection: close\r\n\r\n`,
  );
  let answer = '';
  client.on('data', (chunk: Buffer) => (answer += chunk.toString()));
  await new Promise((resolve) => client.once('close', resolve));
  t.match(answer, /^HTTP\/1\.1 200 [\s\S]*\{"ping":"pong"\}$/);
  void received;
});

t.test(
  'a connection message whose handle did not arrive is not acknowledged, and breaks nothing',
  async (t) => {
    const { tell, next } = parent(t);
    tell({ type: 'syncd:init', init });
    await next('syncd:ready');
    for (const listener of ['gui', 'sync'] as const) tell({ type: 'syncd:connection', seq: 3, listener });
    tell({ type: 'syncd:heartbeat', seq: 4 });
    t.same(await next('syncd:heartbeat'), { type: 'syncd:heartbeat', seq: 4 }, 'the worker answers on');
    const { handed, client } = await connectionPair(t);
    tell({ type: 'syncd:connection', seq: 5, listener: 'gui' }, handed);
    t.same(
      await next('syncd:accepted'),
      { type: 'syncd:accepted', seq: 5, listener: 'gui' },
      'the next one is taken',
    );
    client.destroy();
  },
);

t.test('the service is acquired and released on request, each answered with its seq', async (t) => {
  const { tell, next, received } = parent(t);
  tell({ type: 'syncd:init', init });
  await next('syncd:ready');
  tell({ type: 'syncd:acquire', seq: 3 });
  t.same(await next('syncd:acquired'), { type: 'syncd:acquired', seq: 3 });
  tell({ type: 'syncd:release', seq: 4 });
  t.same(await next('syncd:released'), { type: 'syncd:released', seq: 4 });
  void received;
});

t.test('errors recorded here go to the supervisor, and changes from there apply here', async (t) => {
  const { tell, next } = parent(t);
  tell({ type: 'syncd:init', init });
  await next('syncd:ready');
  const { handed, client } = await connectionPair(t);
  tell({ type: 'syncd:connection', seq: 1, listener: 'gui' }, handed);
  await next('syncd:accepted');
  client.write(
    `POST /rest/system/error HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${apiKey}\r\nContent-Length: 9\r\nConnection: close\r\n\r\ndisk full`,
  );
  client.resume();
  const reported = await next('syncd:errors');
  t.match(reported.change, { op: 'add', error: { message: 'disk full', level: 50 } });
  tell({ type: 'syncd:errors', change: { op: 'clear' } });
  const { handed: second, client: reader } = await connectionPair(t);
  tell({ type: 'syncd:connection', seq: 2, listener: 'gui' }, second);
  reader.write(
    `GET /rest/system/error HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${apiKey}\r\nConnection: close\r\n\r\n`,
  );
  let answer = '';
  reader.on('data', (chunk: Buffer) => (answer += chunk.toString()));
  await new Promise((resolve) => reader.once('close', resolve));
  t.match(answer, /\{"errors":\[\]\}$/, 'cleared from the supervisor');
});

t.test('a drain releases the service and ends the worker', async (t) => {
  const channel = parent(t);
  channel.tell({ type: 'syncd:init', init });
  await channel.next('syncd:ready');
  channel.tell({ type: 'syncd:acquire', seq: 1 });
  await channel.next('syncd:acquired');
  channel.tell({ type: 'syncd:drain', reason: 'restart' });
  await channel.stopped;
  t.pass('stopped');
});
