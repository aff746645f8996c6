import { connect, type Socket } from 'node:net';
import t from 'tap';
import { startPingers } from '../../scripts/pingers.ts';
import { startService } from '../helpers/service.ts';

function openSocket(address: string): Promise<Socket> {
  const at = address.lastIndexOf(':');
  return new Promise((resolve, reject) => {
    const socket = connect({ host: address.slice(0, at), port: Number(address.slice(at + 1)) });
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

t.test('300 slowloris connections do not stop pings, and are closed when their time is up', async (t) => {
  const service = await startService(t, { env: { SYNCD_HEADERS_TIMEOUT: '2s' } });
  const slow: Socket[] = [];
  const closedAt: number[] = [];
  const answers: string[] = [];
  const started = Date.now();
  for (let i = 0; i < 300; i++) {
    const socket = await openSocket(service.address);
    socket.on('error', () => {});
    socket.on('close', () => closedAt.push(Date.now() - started));
    socket.on('data', (chunk: Buffer) => answers.push(chunk.toString('latin1').split('\r\n')[0] ?? ''));
    socket.write('GET /rest/system/ping HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    slow.push(socket);
  }
  t.teardown(() => slow.forEach((socket) => socket.destroy()));
  // One more header byte every 200 ms on each: never finishing, never idle.
  const drip = setInterval(() => slow.forEach((socket) => !socket.destroyed && socket.write('a')), 200);
  t.teardown(() => clearInterval(drip));

  const pingers = startPingers({
    url: service.url,
    apiKey: service.apiKey,
    clients: 2,
    intervalMs: 50,
    keepAlive: false,
  });
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const report = await pingers.stop();
  t.same(report.failures, [], 'every ping answered');
  t.ok(report.ok > 20, `${report.ok} pings`);
  t.ok(
    Math.max(...report.latencies) < 1000,
    `promptly: the slowest took ${Math.round(Math.max(...report.latencies))} ms`,
  );

  // The headers timeout is 2 s, checked every second: all gone well within 6 s of opening.
  await new Promise((resolve) => setTimeout(resolve, 6000 - (Date.now() - started)));
  t.equal(closedAt.length, 300, 'every slow connection was closed by the service');
  t.equal(
    answers.filter((line) => line === 'HTTP/1.1 408 Request Timeout').length,
    300,
    'each told 408 first',
  );
  t.ok(Math.min(...closedAt) >= 1500, `none before its time (first after ${Math.min(...closedAt)} ms)`);
});

t.test(
  'connections over --max-connections are closed at once, and pings come back once they go',
  async (t) => {
    const service = await startService(t, { env: { SYNCD_MAX_CONNECTIONS: '20' } });
    const held: Socket[] = [];
    for (let i = 0; i < 20; i++) held.push(await openSocket(service.address));
    t.teardown(() => held.forEach((socket) => socket.destroy()));
    await new Promise((resolve) => setTimeout(resolve, 200));

    const extra = await openSocket(service.address);
    extra.on('error', () => {});
    const closed = await new Promise<boolean>((resolve) => {
      extra.once('close', () => resolve(true));
      setTimeout(() => resolve(false), 2000);
    });
    t.ok(closed, 'the connection over the limit was closed');

    held.forEach((socket) => socket.destroy());
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.same(await service.client.ping(), { ping: 'pong' }, 'served again');
  },
);
