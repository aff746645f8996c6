// syncd watch against the REST app in this process, on a real port: a service stopped and started anew
// numbers its events from 1 again, and the watch goes on with them rather than wait for IDs past its last.
import getPort from 'get-port';
import t from 'tap';
import { watchCommand } from '../../../scripts/cli/watch-command.ts';
import { buildApp } from '../../../worker/http/app.ts';
import { EventLog } from '../../../worker/events/event-log.ts';
import { appOptions, testApiKey } from '../../helpers/app.ts';
import { localConfig } from '../../helpers/config.ts';

const port = await getPort({ host: '127.0.0.1' });

/** The REST app with an event log of its own, listening on the port; closed by the test. */
async function serve(events: EventLog) {
  const app = buildApp(appOptions({ config: localConfig().config, events, model: () => undefined }));
  await app.listen({ host: '127.0.0.1', port });
  return app;
}

t.test('a service started anew: the watch says so and prints its events', async (t) => {
  const first = new EventLog();
  // The watch's subscription, made before it asks: it prints from the first event on (since 0).
  first.subscription(['Starting']);
  first.log('Starting', { home: '/first', myID: 'X' });
  let app = await serve(first);
  t.teardown(() => app.close());
  const out: string[] = [];
  const err: string[] = [];
  const target = { address: `127.0.0.1:${port}`, url: `http://127.0.0.1:${port}`, apiKey: testApiKey };
  const watching = watchCommand(
    target as Parameters<typeof watchCommand>[0],
    { types: 'Starting', disk: false, count: 2, forMs: 60_000, since: 0, json: false },
    { out: (text) => out.push(text), err: (text) => err.push(text) },
  );
  while (out.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  t.match(out[0], /Starting +starting, home \/first$/);
  // Stopped as the service stops: the watch's long poll cut.
  const closing = app.close();
  app.server.closeAllConnections();
  await closing;
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const second = new EventLog();
  app = await serve(second);
  while (out.length < 2) {
    second.log('Starting', { home: '/second', myID: 'X' });
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await watching;
  t.match(out[1], /Starting +starting, home \/second$/, "the new service's event");
  t.match(err.join('\n'), /does not answer; waiting for it\n.*answers again \(started anew\)/);
});
