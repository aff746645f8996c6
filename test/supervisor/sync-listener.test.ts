import { connect, createServer, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import t, { type Test } from 'tap';
import { createLogger } from '../../shared/logger.ts';
import { SaveRefused } from '../../supervisor/config-store.ts';
import { Listeners } from '../../supervisor/listeners.ts';
import { SyncListener } from '../../supervisor/sync-listener.ts';
import { testConfiguration } from '../helpers/config.ts';

const silent = createLogger(
  'supervisor',
  'fatal',
  () => {},
  new Writable({ write: (_c, _e, done) => done() }),
);

const withListen = (listenAddresses: string[]) => testConfiguration({ options: { listenAddresses } });

/** Connects to a tcp:// URL: 'connected' or the error's code. */
const reach = (url: string) =>
  new Promise<string>((resolve) => {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });

async function started(t: Test, listen: string[]) {
  const listeners = new Listeners();
  const accepted: Socket[] = [];
  listeners.startAccepting((name, socket) => {
    t.equal(name, 'sync', 'every sync address feeds the sync handoff');
    accepted.push(socket);
  });
  const sync = new SyncListener({ listeners, logger: silent, flag: undefined });
  t.teardown(() => {
    sync.stop();
    listeners.close();
    for (const socket of accepted) socket.destroy();
  });
  const changes: unknown[] = [];
  const config = withListen(listen);
  await sync.start(config, (listening) => changes.push(listening));
  return { sync, accepted, changes, config };
}

t.test('each TCP listen address is served; relays and QUIC are not the supervisor’s', async (t) => {
  const { sync } = await started(t, [
    'tcp://127.0.0.1:0',
    'tcp://127.0.0.2:0',
    'quic://0.0.0.0:22000',
    'relay://127.0.0.1:22067/?id=X',
  ]);
  const listening = sync.listening;
  t.same(Object.keys(listening), ['tcp://127.0.0.1:0', 'tcp://127.0.0.2:0', 'quic://0.0.0.0:22000']);
  for (const text of ['tcp://127.0.0.1:0', 'tcp://127.0.0.2:0']) {
    const { bound, error } = listening[text]!;
    t.equal(error, null);
    t.match(bound, /^tcp:\/\/127\.0\.0\.[12]:[1-9]\d*$/);
    t.equal(await reach(bound!), 'connected', `${text} accepts`);
  }
  t.match(listening['quic://0.0.0.0:22000']!.error, /quic addresses are not supported by syncd/);
});

t.test('a change keeps the addresses that stay, binds the new and lets the gone go', async (t) => {
  const { sync, accepted, config } = await started(t, ['tcp://127.0.0.1:0', 'tcp://127.0.0.2:0']);
  const before = sync.listening;
  const kept = before['tcp://127.0.0.1:0']!.bound!;
  const gone = before['tcp://127.0.0.2:0']!.bound!;
  // A device connected through the address that stays.
  const device = connect(Number(new URL(kept).port), '127.0.0.1');
  await new Promise((resolve) => device.once('connect', resolve));
  t.teardown(() => device.destroy());

  const next = withListen(['tcp://127.0.0.1:0', 'tcp://127.0.0.3:0']);
  const step = await sync.saveStep(config, next);
  t.ok(step, 'the change has a step');
  step!.commit();
  const after = sync.listening;
  t.same(Object.keys(after), ['tcp://127.0.0.1:0', 'tcp://127.0.0.3:0']);
  t.equal(after['tcp://127.0.0.1:0']!.bound, kept, 'the address that stays keeps its socket and port');
  t.equal(await reach(kept), 'connected');
  t.equal(await reach(after['tcp://127.0.0.3:0']!.bound!), 'connected', 'the new address serves');
  t.equal(await reach(gone), 'ECONNREFUSED', 'the address no longer configured is let go');
  t.notOk(accepted[0]!.destroyed, 'the connection that came in before the change is kept');
});

t.test('a change to an address another program holds is refused and changes nothing', async (t) => {
  const other = createServer();
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  t.teardown(() => other.close());
  const taken = (other.address() as { port: number }).port;
  const { sync, config } = await started(t, ['tcp://127.0.0.2:0']);
  const before = sync.listening;
  const refused = await sync
    .saveStep(config, withListen(['tcp://127.0.0.4:0', `tcp://127.0.0.1:${taken}`]))
    .catch((error: unknown) => error);
  t.type(refused, SaveRefused);
  t.match(
    (refused as Error).message,
    /options\.listenAddresses: cannot listen on 127\.0\.0\.1:\d+: the port is already in use/,
  );
  t.same(sync.listening, before);
  t.equal(await reach(before['tcp://127.0.0.2:0']!.bound!), 'connected');
});

t.test('default stands for Syncthing’s TCP address and relay pool', async (t) => {
  const { listenAddresses } = await import('../../shared/sync-url.ts');
  t.same(listenAddresses(['default', ' tcp://127.0.0.1:22001 ', 'tcp://0.0.0.0:22000', '']), [
    'tcp://0.0.0.0:22000',
    'dynamic+https://relays.syncthing.net/endpoint',
    'tcp://127.0.0.1:22001',
  ]);
});

t.test('an address taken at start is reported, and served once it is free', async (t) => {
  const other = createServer();
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  const taken = (other.address() as { port: number }).port;
  const { sync, config } = await started(t, [`tcp://127.0.0.1:${taken}`, 'tcp://127.0.0.2:0']);
  const listening = sync.listening;
  t.match(listening[`tcp://127.0.0.1:${taken}`], { bound: null, error: /already in use/ });
  t.equal(listening['tcp://127.0.0.2:0']!.error, null, 'the other address serves meanwhile');
  // A change elsewhere is made; the taken address stays as it was, tried again.
  const next = withListen([`tcp://127.0.0.1:${taken}`, 'tcp://127.0.0.2:0', 'tcp://127.0.0.3:0']);
  (await sync.saveStep(config, next))!.commit();
  t.match(sync.listening, {
    [`tcp://127.0.0.1:${taken}`]: { bound: null, error: /already in use/ },
    'tcp://127.0.0.3:0': { bound: /^tcp:\/\/127\.0\.0\.3:/, error: null },
  });
  await new Promise((resolve) => other.close(resolve));
});

t.test('an address moved to another host on the same port is served there', async (t) => {
  const { default: getPort } = await import('get-port');
  const port = await getPort({ host: '127.0.0.1' });
  const { sync, config } = await started(t, [`tcp://0.0.0.0:${port}`]);
  t.equal(sync.listening[`tcp://0.0.0.0:${port}`]?.error, null);
  const step = await sync.saveStep(config, withListen([`tcp://127.0.0.1:${port}`]));
  step!.commit();
  t.same(sync.listening, { [`tcp://127.0.0.1:${port}`]: { bound: `tcp://127.0.0.1:${port}`, error: null } });
  t.equal(await reach(`tcp://127.0.0.1:${port}`), 'connected');
});
