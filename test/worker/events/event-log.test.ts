import t from 'tap';
import { EVENT_IDS_PER_WORKER } from '../../../shared/ipc/protocol.ts';
import { BUFFERED_EVENTS, EventLog } from '../../../worker/events/event-log.ts';

t.test('each subscription numbers its events from 1; globalID counts every event', async (t) => {
  const log = new EventLog();
  log.log('Starting', { myID: 'X' });
  const paused = log.subscription(['DevicePaused', 'DeviceResumed']);
  t.same(await paused.since(0, 0), [], 'a filter made now has nothing from before');
  log.log('ConfigSaved', {});
  log.log('DevicePaused', { device: 'A' });
  log.log('DeviceResumed', { device: 'A' });
  const filtered = await paused.since(0, 0);
  t.same(
    filtered.map((event) => [event.id, event.globalID, event.type]),
    [
      [1, 3, 'DevicePaused'],
      [2, 4, 'DeviceResumed'],
    ],
  );
  const all = await log.subscription(EventLog.defaultTypes).since(0, 0);
  t.same(
    all.map((event) => event.id),
    [1, 2, 3, 4],
  );
  t.match(all[0], { type: 'Starting', data: { myID: 'X' }, time: /^\d{4}-\d\d-\d\dT/ });
  t.same(
    (await log.subscription(EventLog.defaultTypes).since(2, 0)).map((event) => event.id),
    [3, 4],
    'since: only later ones',
  );
  t.equal(
    log.subscription(['DeviceResumed', 'DevicePaused']),
    paused,
    'the same set is the same subscription',
  );
});

t.test("a later worker's IDs start past every ID an earlier one could give", async (t) => {
  const base = 2 * EVENT_IDS_PER_WORKER;
  const log = new EventLog(base);
  log.log('Starting', { myID: 'X' });
  const paused = log.subscription(['DevicePaused']);
  log.log('DevicePaused', { device: 'A' });
  const all = await log.subscription(EventLog.defaultTypes).since(0, 0);
  t.same(
    all.map((event) => [event.id, event.globalID]),
    [
      [base + 1, base + 1],
      [base + 2, base + 2],
    ],
  );
  t.same(
    (await paused.since(0, 0)).map((event) => [event.id, event.globalID]),
    [[base + 1, base + 2]],
    'a subscription made later numbers from the same start',
  );
  // A client that polled the previous worker up to its last ID gets this one's events.
  const lastOfEarlier = base - 1;
  t.equal((await log.subscription(EventLog.defaultTypes).since(lastOfEarlier, 0)).length, 2);
  t.ok(Number.isSafeInteger(1000 * EVENT_IDS_PER_WORKER + EVENT_IDS_PER_WORKER), 'a thousand workers on');
});

t.test('the disk events are apart from the default stream', async (t) => {
  const log = new EventLog();
  log.log('LocalChangeDetected', { path: 'a' });
  t.same(await log.subscription(EventLog.defaultTypes).since(0, 0), []);
  t.equal((await log.subscription(EventLog.diskTypes).since(0, 0)).length, 1);
});

t.test('a poll waits for the next event, or its timeout, or the client, or the close', async (t) => {
  const log = new EventLog();
  const subscription = log.subscription(EventLog.defaultTypes);
  const waiting = subscription.since(0, 30_000);
  setTimeout(() => log.log('ConfigSaved', { n: 1 }), 20);
  t.equal((await waiting).length, 1, 'woken by the event');

  const started = Date.now();
  t.same(await subscription.since(1, 50), [], 'nothing came: empty at the timeout');
  t.ok(Date.now() - started >= 40);

  const gone = new AbortController();
  const cancelled = subscription.since(1, 30_000, gone.signal);
  gone.abort();
  t.same(await cancelled, [], 'a client that went away');

  const closing = subscription.since(1, 30_000);
  log.close();
  t.same(await closing, [], 'a stopping worker ends the wait');
});

t.test('each subscription keeps the last events only', async (t) => {
  const log = new EventLog();
  for (let i = 0; i < BUFFERED_EVENTS + 10; i++) log.log('ConfigSaved', { i });
  const events = await log.subscription(EventLog.defaultTypes).since(0, 0);
  t.equal(events.length, BUFFERED_EVENTS);
  t.equal(events[0]?.id, 11);
});
