import { connect } from 'node:net';
import t from 'tap';
import { Listeners } from '../../supervisor/listeners.ts';

const connectOutcome = (port: number) =>
  new Promise<string>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });

t.test('a listener bound anew listens first, then the old one lets its address go', async (t) => {
  const listeners = new Listeners();
  t.teardown(() => listeners.close());
  const first = await listeners.bind('gui', { host: '127.0.0.1', port: 0 });
  const accepted: number[] = [];
  listeners.startAccepting((name, socket) => {
    t.equal(name, 'gui');
    accepted.push(socket.localPort ?? 0);
    socket.destroy();
  });
  t.equal(await connectOutcome(first.bound.port), 'connected');
  const second = await listeners.bind('gui', { host: '127.0.0.1', port: 0 });
  t.equal(listeners.get('gui'), second);
  t.equal(await connectOutcome(second.bound.port), 'connected', 'the new address serves');
  t.equal(await connectOutcome(first.bound.port), 'ECONNREFUSED', 'the old one is let go');
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.same(accepted, [first.bound.port, second.bound.port], 'each connection reached the supervisor');
});

t.test('an address that cannot be bound leaves the listener as it was', async (t) => {
  const listeners = new Listeners();
  t.teardown(() => listeners.close());
  const first = await listeners.bind('gui', { host: '127.0.0.1', port: 0 });
  await t.rejects(listeners.bind('gui', { host: '127.0.0.1', port: first.bound.port }), {
    name: 'SettingError',
  });
  t.equal(listeners.get('gui'), first);
  t.equal(await connectOutcome(first.bound.port), 'connected');
});
