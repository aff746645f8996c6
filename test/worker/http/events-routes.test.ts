// GET /rest/events in-process: the ids of a later worker (past 2^32) are read back as `since`.
import t from 'tap';
import { EventLog } from '../../../worker/events/event-log.ts';
import { buildApp } from '../../../worker/http/app.ts';
import { EVENT_IDS_PER_WORKER } from '../../../shared/ipc/protocol.ts';
import { appOptions, injector } from '../../helpers/app.ts';

t.test('since: any event id a worker gives, however many workers came before', async (t) => {
  const events = new EventLog(3 * EVENT_IDS_PER_WORKER);
  const app = buildApp(appOptions({ events }));
  await app.ready();
  t.teardown(() => app.close());
  const call = injector(app);
  events.log('ConfigSaved', {});
  events.log('ConfigSaved', {});
  const all = (await call('GET', '/rest/events?since=0&timeout=0')).json();
  const first = all[0].id;
  t.ok(first > 3 * EVENT_IDS_PER_WORKER, `ids go on from ${first}`);
  const after = await call('GET', `/rest/events?since=${first}&timeout=0`);
  t.equal(after.status, 200);
  t.same(
    after.json().map((event: { id: number }) => event.id),
    [first + 1],
  );
  t.equal((await call('GET', '/rest/events?since=1234567890123456&timeout=0')).status, 400, 'past 15 digits');
  t.equal((await call('GET', '/rest/events?since=-1&timeout=0')).status, 400);
});
