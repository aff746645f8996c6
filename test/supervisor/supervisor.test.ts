import type { Socket } from 'node:net';
import { join } from 'node:path';
import { ConfigStore } from '../../supervisor/config-store.ts';
import { testConfiguration } from '../helpers/config.ts';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { createLogger } from '../../shared/logger.ts';
import { EVENT_IDS_PER_WORKER } from '../../shared/ipc/protocol.ts';
import { RecentErrors } from '../../shared/recent-errors.ts';
import type { CpuWait } from '../../supervisor/cpu-wait.ts';
import { SAME_DELIVERY_MS, Supervisor, type SupervisorOptions } from '../../supervisor/supervisor.ts';
import { FakeWorker } from '../fixtures/fake-worker.ts';

const settings: SupervisorOptions['settings'] = {
  logLevel: 'info',
  drainTimeoutMs: 1000,
  headersTimeoutMs: 1000,
  requestTimeoutMs: 1000,
  maxConnections: 10,
  crashLimit: 5,
  crashWindowMs: 60_000,
  startupTimeoutMs: 5000,
  heartbeatTimeoutMs: 10_000,
};

interface LogRecord {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A supervisor of fake workers, with its log lines and a clock a test can move. */
function setup(t: Test, overrides: Partial<SupervisorOptions['settings']> = {}) {
  const workers: FakeWorker[] = [];
  const log: LogRecord[] = [];
  const errors = new RecentErrors();
  const clock = { offset: 0 };
  // The clock restart requests are dated by (monotonicMicros), moved by the tests that need it.
  const mono = { now: 0 };
  // What each worker's threads have waited for a CPU, by pid (the real one reads /proc).
  const cpuWait = new Map<number, CpuWait>();
  let listenerOpen = true;
  // The logger feeds the supervisor's errors, and the supervisor needs the logger.
  const made: { supervisor?: Supervisor } = {};
  const sink = new Writable({
    write(chunk, _encoding, done) {
      log.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  const logger = createLogger(
    'supervisor',
    'debug',
    (error, slot) => made.supervisor?.recordError({ op: 'add', error, slot }),
    sink,
  );
  const supervisor = new Supervisor({
    settings: { ...settings, ...overrides },
    worker: {
      apiKey: 'key',
      deviceId: 'DEVICE',
      home: '/nowhere',
      address: '127.0.0.1:1',
      allowedHosts: null,
      tls: null,
      overridden: { guiAddress: false, apiKey: false, tls: false },
      sync: {},
      device: { cert: '', key: '' },
      announce: { local: null, global: null },
    },
    config: new ConfigStore(join(t.testdir(), 'config.json'), testConfiguration()),
    closeListeners: () => {
      listenerOpen = false;
    },
    logger,
    errors,
    spawn: (events) => {
      const worker = new FakeWorker(events);
      workers.push(worker);
      return worker;
    },
    readClock: () => performance.now() + clock.offset,
    readMonotonic: () => mono.now,
    cpuWaits: (pid) => ({ read: () => cpuWait.get(pid) ?? { waitedMs: 0, waitingNow: false } }),
  });
  made.supervisor = supervisor;
  t.teardown(() => {
    if (supervisor.state !== 'stopped') supervisor.forceStop('the test is over');
  });
  return {
    supervisor,
    workers,
    log,
    errors,
    clock,
    mono,
    cpuWait,
    listenerOpen: () => listenerOpen,
    /** The worker started `n`th, once it exists. */
    worker: (n: number) => workers[n] as FakeWorker,
  };
}

/**
 * A restart whose old worker holds the service and does not let go by itself: the first worker serves
 * and holds it, neither drains nor releases on request, and its replacement is ready.
 */
async function restartWithHolderHoldingOn(supervisor: Supervisor, worker: (n: number) => FakeWorker) {
  supervisor.start();
  worker(0).ready();
  await settle();
  worker(0).drainsAtOnce = false;
  worker(0).releases = false;
  supervisor.restart('API');
  worker(1).ready();
}

/** Lets queued microtasks and immediate callbacks run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

t.test(
  'the first worker is sent its settings and the errors so far, and its ready is logged once',
  async (t) => {
    const { supervisor, worker, log } = setup(t);
    supervisor.start();
    t.equal(supervisor.state, 'starting');
    const [init] = worker(0).received('syncd:init');
    t.match(init?.init, {
      apiKey: 'key',
      settings: { maxConnections: 10, drainTimeoutMs: 1000 },
      errors: [],
    });
    worker(0).ready();
    t.equal(supervisor.state, 'running');
    t.equal(log.filter((line) => line.msg === 'ready').length, 1);
  },
);

/** A supervisor whose first worker serves, at 10 on the clock restart requests are dated by. */
function serving(t: Test) {
  const made = setup(t);
  made.supervisor.start();
  made.worker(0).ready();
  made.mono.now = 10;
  return made;
}

/** A restart asked through worker `n`, as its restart route sends it, taken at `askedAt`. */
const askRestart = (worker: FakeWorker, askedAt: number) =>
  worker.say({ type: 'syncd:action', action: 'restart', askedAt });

t.test('a restart asked through a replaced worker is done by a worker started after it', async (t) => {
  const { supervisor, worker, workers, mono, log } = serving(t);
  supervisor.restart('API'); // worker 1 starts at 10
  worker(1).ready();
  // worker 0 drains a keep-alive connection on which a restart was asked before worker 1 started.
  askRestart(worker(0), 5);
  t.equal(workers.length, 2, 'asked before its replacement started: already done');
  t.ok(log.some((line) => line.msg === 'restart from a replaced worker: already done'));
  // And one asked after: worker 1 started before it, so a new worker follows.
  mono.now = 30;
  askRestart(worker(0), 20);
  t.equal(workers.length, 3, 'asked after: a new worker');
  t.equal(supervisor.stats.restarts, 2);
});

t.test('a restart asked while one is under way is joined, or followed by another', async (t) => {
  const { supervisor, worker, workers, mono } = serving(t);
  askRestart(worker(0), 8); // worker 1 starts at 10
  t.equal(workers.length, 2, 'a restart');
  // Asked before worker 1 started (the same click, or a request that waited): joined.
  askRestart(worker(0), 9);
  t.equal(workers.length, 2, 'joined');
  // Asked after it started: answered 200 now, so a worker started after it must follow.
  askRestart(worker(0), 12);
  askRestart(worker(0), 13);
  t.equal(workers.length, 2, 'not while worker 1 starts');
  mono.now = 20;
  worker(1).ready();
  t.equal(workers.length, 3, 'once it is ready, one more for both');
  worker(2).ready();
  t.equal(workers.length, 3, 'and no more');
  t.equal(supervisor.stats.restarts, 2);
});

t.test('a restart to follow is dropped with the restart it followed when that one fails', async (t) => {
  const { supervisor, worker, workers } = serving(t);
  supervisor.restart('API');
  askRestart(worker(0), 12);
  worker(1).exit({ code: 1 });
  await settle();
  t.equal(workers.length, 2, 'the serving worker keeps serving; nothing more is started');
  t.equal(supervisor.state, 'running');
});

t.test('each worker started gets event IDs of its own, past those of the ones before', async (t) => {
  const { supervisor, worker } = setup(t);
  supervisor.start();
  worker(0).ready();
  supervisor.restart('API');
  worker(1).ready();
  supervisor.restart('API');
  t.same(
    [0, 1, 2].map((n) => worker(n).received('syncd:init')[0]?.init.eventIdBase),
    [0, EVENT_IDS_PER_WORKER, 2 * EVENT_IDS_PER_WORKER],
  );
});

t.test('a restart starts a new worker, then drains the old one once the new one is ready', async (t) => {
  const { supervisor, worker } = setup(t);
  supervisor.start();
  worker(0).ready();
  supervisor.restart('API');
  t.equal(supervisor.state, 'restarting');
  supervisor.restart('API again');
  t.equal(worker(0).received('syncd:drain').length, 0, 'the old one serves until the new one is ready');
  worker(1).ready();
  t.same(worker(0).received('syncd:drain'), [{ type: 'syncd:drain', reason: 'restart' }]);
  await settle();
  t.equal(supervisor.state, 'running');
  t.same(supervisor.stats.restarts, 1, 'a restart asked for while one is under way joins it');
  t.equal(supervisor.stats.crashes, 0);
});

t.test(
  'a shutdown that crosses a restart ends the supervisor even when the new worker says ready',
  async (t) => {
    const { supervisor, worker, listenerOpen } = setup(t);
    supervisor.start();
    worker(0).ready();
    supervisor.restart('API');
    worker(0).drainsAtOnce = false;
    supervisor.shutdown('SIGTERM');
    // The ready was already on its way when the shutdown killed the starting worker.
    worker(1).ready();
    t.equal(supervisor.state, 'stopping', 'still stopping, not running again');
    t.notOk(listenerOpen(), 'the port is closed');
    worker(0).exit({ code: 0 });
    t.equal(await supervisor.done, 0, 'and it exits');
    t.same(worker(1).signals, ['SIGKILL']);
  },
);

t.test('a restart whose new worker cannot start keeps the serving one and is no crash', async (t) => {
  const { supervisor, worker, log, errors } = setup(t, { crashLimit: 0 });
  supervisor.start();
  worker(0).ready();
  for (let attempt = 1; attempt <= 3; attempt++) {
    supervisor.restart('deploy');
    worker(attempt).exit({ code: 1, lastStderrLine: "Error: Cannot find module '/app/dist/worker/main.js'" });
    t.equal(supervisor.state, 'running', `attempt ${attempt}: the old worker still serves`);
  }
  t.equal(supervisor.stats.crashes, 0, 'no crash counted, so no giving up');
  t.same(worker(0).received('syncd:drain'), [], 'the serving worker was never told to stop');
  const failures = log.filter((line) => /^restart failed: worker \d+ exited with code 1/.test(line.msg));
  t.equal(failures.length, 3, 'each failure logged');
  t.match(failures[0], { level: 50, msg: /Cannot find module.*; worker \d+ keeps serving$/ });
  t.equal(errors.list().length, 3, 'and reported in the recent errors');
  t.equal(worker(0).received('syncd:errors').length, 3, 'which the serving worker hears of');
  supervisor.restart('fixed deploy');
  worker(4).ready();
  t.equal(worker(0).received('syncd:drain').length, 1, 'a later restart works');
});

t.test('a replacement not ready in time is killed and the serving worker kept', async (t) => {
  const { supervisor, worker, log } = setup(t, { startupTimeoutMs: 50 });
  supervisor.start();
  worker(0).ready();
  supervisor.restart('API');
  await sleep(150);
  t.same(worker(1).signals, ['SIGKILL']);
  t.equal(supervisor.state, 'running');
  t.equal(supervisor.stats.crashes, 0);
  t.ok(log.some((line) => /restart failed: .*not ready within the startup timeout of 50ms/.test(line.msg)));
});

t.test(
  'a crashed worker is replaced after a backoff, and its report stays in the recent errors',
  async (t) => {
    const { supervisor, worker, errors } = setup(t);
    supervisor.start();
    worker(0).ready();
    worker(0).exit({ code: 1, lastStderrLine: 'worker crashed: uncaught Error: boom' });
    t.equal(supervisor.state, 'recovering');
    await sleep(150);
    t.ok(worker(1), 'replaced after 100 ms');
    const [init] = worker(1).received('syncd:init');
    t.match(init?.init.errors, [
      { message: /worker \d+ exited with code 1; its last stderr line: worker crashed/ },
    ]);
    t.equal(init?.init.supervisor.crashes, 1);
    worker(1).ready();
    supervisor.restart('API');
    worker(2).ready();
    t.equal(
      worker(2).received('syncd:init')[0]?.init.errors.length,
      1,
      'a restart keeps the crash report: the supervisor holds the list',
    );
    t.equal(errors.list().length, 1);
  },
);

t.test('a crash while a replacement starts reaches the replacement, stats included', async (t) => {
  const { supervisor, worker, workers } = setup(t);
  supervisor.start();
  worker(0).ready();
  supervisor.restart('API');
  worker(0).exit({ code: null, signal: 'SIGKILL' });
  t.equal(supervisor.stats.crashes, 1);
  t.match(worker(1).received('syncd:errors'), [
    { change: { op: 'add', error: { message: /killed by SIGKILL/ } } },
  ]);
  t.match(worker(1).received('syncd:stats').at(-1), { supervisor: { crashes: 1 } });
  t.equal(supervisor.state, 'recovering', 'no respawn: the replacement is on its way');
  worker(1).ready();
  t.equal(supervisor.state, 'running');
  t.equal(workers.length, 2, 'no third worker');
});

t.test(
  'a start that fails while nothing serves is a crash, and too many end the supervisor with 3',
  async (t) => {
    const { supervisor, worker, log } = setup(t, { crashLimit: 1 });
    supervisor.start();
    worker(0).exit({ code: 1 });
    await sleep(150);
    worker(1).exit({ code: 1 });
    t.equal(await supervisor.done, 3);
    t.match(
      log.find((line) => line.level === 60),
      { msg: /2 worker crashes within 60s \(limit 1\): giving up/ },
    );
  },
);

t.test('errors recorded by one worker reach the others and the supervisor; clear empties all', async (t) => {
  const { supervisor, worker, errors } = setup(t);
  supervisor.start();
  worker(0).ready();
  supervisor.restart('API');
  const error = { when: new Date().toISOString(), message: 'disk full', level: 50 };
  worker(0).say({ type: 'syncd:errors', change: { op: 'add', error } });
  t.same(errors.list(), [error]);
  t.same(worker(1).received('syncd:errors'), [{ type: 'syncd:errors', change: { op: 'add', error } }]);
  t.same(worker(0).received('syncd:errors'), [], 'not echoed to the one that made it');
  worker(1).say({ type: 'syncd:errors', change: { op: 'clear' } });
  t.same(errors.list(), []);
  t.same(worker(0).received('syncd:errors').at(-1), { type: 'syncd:errors', change: { op: 'clear' } });
});

t.test('a worker that stops answering heartbeats is killed and counts as a crash', async (t) => {
  const { supervisor, worker } = setup(t, { heartbeatTimeoutMs: 200 });
  supervisor.start();
  worker(0).ready();
  worker(0).healthy = false;
  await sleep(600);
  t.same(worker(0).signals, ['SIGKILL']);
  t.equal(supervisor.stats.crashes, 1);
});

t.test('a worker starved of CPU is not taken for hung; one that runs without answering is', async (t) => {
  const { supervisor, worker, cpuWait, log } = setup(t, { heartbeatTimeoutMs: 200 });
  supervisor.start();
  worker(0).ready();
  const { pid } = worker(0);
  // Its threads wait for a CPU nearly all the time (a low-priority worker among busier processes): it
  // answers nothing, for five timeouts. Linux counts a wait once it is over.
  worker(0).healthy = false;
  const started = performance.now();
  const waitAll = setInterval(
    () => cpuWait.set(pid, { waitedMs: (performance.now() - started) * 0.95, waitingNow: false }),
    5,
  );
  await sleep(1000);
  clearInterval(waitAll);
  t.same(worker(0).signals, [], 'not killed while it waited for a CPU');
  // A wait under way, not counted yet, for five timeouts more.
  cpuWait.set(pid, { waitedMs: (cpuWait.get(pid) as CpuWait).waitedMs, waitingNow: true });
  await sleep(1000);
  t.same(worker(0).signals, [], 'nor while it waits for one now');
  cpuWait.set(pid, { waitedMs: (cpuWait.get(pid) as CpuWait).waitedMs + 1000, waitingNow: false });
  // Then it gets the CPU and still answers nothing: hung.
  await sleep(600);
  t.same(worker(0).signals, ['SIGKILL'], 'killed once it ran for the timeout without answering');
  t.equal(supervisor.stats.crashes, 1);
  const killed = log.find((line) => /is hung/.test(line.msg));
  t.match(killed?.msg, /ms of it waiting for a CPU; timeout 200ms/, 'the log says how long it waited');
});

t.test('a pause of the whole service is not taken for a hung worker', async (t) => {
  const { supervisor, worker, clock } = setup(t, { heartbeatTimeoutMs: 400 });
  supervisor.start();
  worker(0).ready();
  await sleep(300);
  // Both processes stop for a minute (docker pause, a laptop asleep) just after a heartbeat was sent.
  // On resume the supervisor's timer fires before the worker's answer, already in the channel, is read.
  worker(0).healthy = false;
  const sent = () => worker(0).received('syncd:heartbeat').length;
  const before = sent();
  while (sent() === before) await sleep(5);
  clock.offset += 60_000;
  while (sent() === before + 1 && worker(0).signals.length === 0) await sleep(5);
  for (const { seq } of worker(0).received('syncd:heartbeat'))
    worker(0).say({ type: 'syncd:heartbeat', seq });
  worker(0).healthy = true;
  await sleep(500);
  t.same(worker(0).signals, [], 'not killed');
  t.equal(supervisor.stats.crashes, 0);
  t.equal(supervisor.state, 'running');
});

t.test('a connection whose handle never reached the worker is closed, not left hanging', async (t) => {
  const { supervisor, worker, log } = setup(t, { heartbeatTimeoutMs: 200 });
  supervisor.start();
  worker(0).ready();
  const closed: string[] = [];
  const socket = (name: string) => ({ destroy: () => closed.push(name) }) as unknown as Socket;
  supervisor.accept('gui', socket('taken'));
  t.same(closed, ['taken'], 'an acknowledged one: only the supervisor copy is closed');
  // Past the worker's open-file limit, Node drops a handle it cannot receive: no acknowledgement comes,
  // yet the worker answers the heartbeats sent after it.
  worker(0).send = function (message, handle) {
    this.sent.push(message);
    if (message.type === 'syncd:heartbeat') this.say({ type: 'syncd:heartbeat', seq: message.seq });
    void handle;
  };
  supervisor.accept('gui', socket('lost'));
  await sleep(200);
  t.same(closed, ['taken', 'lost']);
  t.match(
    log.find((line) => line.level === 40),
    { msg: /1 connections handed to worker \d+ never reached it/ },
  );
});

t.test(
  'an acknowledgement settles its own listener’s connection, not another’s of the same seq',
  async (t) => {
    const { supervisor, worker } = setup(t);
    supervisor.start();
    worker(0).ready();
    // Sync connections go to the worker once it holds the service.
    while (supervisor.serviceHolder === undefined) await sleep(5);
    const closed: string[] = [];
    const socket = (name: string) => ({ destroy: () => closed.push(name) }) as unknown as Socket;
    // The worker has not taken them yet: both are seq 1, each of its own listener.
    worker(0).send = function (message, handle) {
      this.sent.push(message);
      void handle;
    };
    supervisor.accept('gui', socket('gui'));
    supervisor.accept('sync', socket('sync'));
    t.same(
      worker(0)
        .sent.filter((m) => m.type === 'syncd:connection')
        .map((m) => 'seq' in m && m.seq),
      [1, 1],
    );
    worker(0).say({ type: 'syncd:accepted', seq: 1, listener: 'sync' });
    t.same(closed, ['sync'], 'the gui connection, still on its way, keeps its copy');
    worker(0).say({ type: 'syncd:accepted', seq: 1, listener: 'gui' });
    t.same(closed, ['sync', 'gui']);
  },
);

t.test('while no worker serves connections are held, the oldest closed past the limit', async (t) => {
  const { supervisor, worker } = setup(t, { maxConnections: 2 });
  const closed: number[] = [];
  const sockets = [0, 1, 2].map((n) => ({ destroy: () => closed.push(n) }) as unknown as Socket);
  for (const socket of sockets) supervisor.accept('gui', socket);
  t.same(closed, [0], 'the oldest makes room');
  supervisor.start();
  worker(0).ready();
  t.same(worker(0).handles.filter(Boolean), [sockets[1], sockets[2]], 'the others go to the first worker');
});

t.test(
  'a stop signal delivered twice at once is one stop; asked again later, it ends everything',
  async (t) => {
    const graceful = setup(t);
    graceful.supervisor.start();
    graceful.worker(0).ready();
    graceful.worker(0).drainsAtOnce = false;
    graceful.supervisor.signal('SIGINT', 1000);
    graceful.supervisor.signal('SIGINT', 1000 + 5);
    t.equal(graceful.supervisor.state, 'stopping');
    t.same(graceful.worker(0).signals, [], 'the worker drains, unhurried');
    graceful.worker(0).exit({ code: 0 });
    t.equal(await graceful.supervisor.done, 0);

    const forced = setup(t);
    forced.supervisor.start();
    forced.worker(0).ready();
    forced.worker(0).drainsAtOnce = false;
    forced.supervisor.signal('SIGTERM', 1000);
    forced.supervisor.signal('SIGTERM', 1000 + SAME_DELIVERY_MS + 1);
    t.equal(await forced.supervisor.done, 1);
    t.same(forced.worker(0).signals, ['SIGKILL']);
  },
);

t.test('SIGHUP restarts; before the first worker is ready it joins the start', async (t) => {
  const { supervisor, worker } = setup(t);
  supervisor.start();
  supervisor.signal('SIGHUP');
  t.equal(supervisor.stats.restarts, 0);
  worker(0).ready();
  supervisor.signal('SIGHUP');
  t.equal(supervisor.stats.restarts, 1);
  t.ok(worker(1));
});

t.test('the first worker ready is given the service, and its holding is logged', async (t) => {
  const { supervisor, worker, log } = setup(t);
  supervisor.start();
  worker(0).ready();
  await settle();
  t.equal(worker(0).received('syncd:acquire').length, 1);
  t.equal(supervisor.serviceHolder, worker(0).pid);
  t.match(
    log.find((line) => line.msg === 'service held'),
    { workerPid: worker(0).pid, gapMs: Number },
  );
});

t.test('at a restart the old worker releases the service before the new one acquires it', async (t) => {
  const { supervisor, worker } = setup(t);
  await restartWithHolderHoldingOn(supervisor, worker);
  await settle();
  t.equal(worker(0).received('syncd:release').length, 1, 'the holder is asked to let go');
  t.same(worker(1).received('syncd:acquire'), [], 'the new worker is not asked to acquire while it holds it');
  t.ok(worker(0).holds && !worker(1).holds, 'never both');
  t.equal(supervisor.serviceHolder, worker(0).pid);
  const [release] = worker(0).received('syncd:release');
  worker(0).holds = false;
  worker(0).say({ type: 'syncd:released', seq: release?.seq ?? 0 });
  t.equal(supervisor.serviceHolder, undefined, 'between the two, nothing holds it');
  await settle();
  t.equal(worker(1).received('syncd:acquire').length, 1, 'then the new one acquires');
  t.equal(supervisor.serviceHolder, worker(1).pid);
});

t.test('a worker that will not release the service is killed, then its successor acquires it', async (t) => {
  const { supervisor, worker, log } = setup(t, { drainTimeoutMs: 100 });
  await restartWithHolderHoldingOn(supervisor, worker);
  await sleep(300);
  t.same(worker(0).signals, ['SIGKILL']);
  t.ok(log.some((line) => /did not release the service within 100ms; killing it/.test(line.msg)));
  t.equal(supervisor.serviceHolder, worker(1).pid);
  t.equal(supervisor.stats.crashes, 0, 'a planned stop, not a crash');
});

t.test('an acquire that fails is tried again on the same worker, and reported', async (t) => {
  const { supervisor, worker, errors } = setup(t);

  supervisor.start();
  worker(0).acquires = 'fails';
  worker(0).ready();
  await settle();
  t.equal(supervisor.serviceHolder, undefined);
  t.match(errors.list(), [{ message: /could not acquire the service: disk on fire; trying again in 100ms/ }]);
  worker(0).acquires = 'at once';
  await sleep(250);
  t.equal(worker(0).received('syncd:acquire').length, 2);
  t.equal(supervisor.serviceHolder, worker(0).pid, 'held on the second try');
  t.equal(supervisor.state, 'running', 'HTTP was served all along');
});

t.test('when the holder crashes, its replacement acquires the service once ready', async (t) => {
  const { supervisor, worker } = setup(t);
  supervisor.start();
  worker(0).ready();
  await settle();
  worker(0).exit({ code: 1 });
  t.equal(supervisor.serviceHolder, undefined);
  await sleep(150);
  worker(1).ready();
  await settle();
  t.equal(supervisor.serviceHolder, worker(1).pid);
});

t.test('nothing is acquired once the supervisor is stopping', async (t) => {
  const { supervisor, worker } = setup(t);
  supervisor.start();
  worker(0).acquires = 'never';
  worker(0).ready();
  supervisor.shutdown('SIGTERM');
  worker(0).say({ type: 'syncd:acquired', seq: 1 });
  t.equal(await supervisor.done, 0);
  t.equal(worker(0).received('syncd:acquire').length, 1);
});

t.test('crashes in a row are replaced after a backoff that doubles', async (t) => {
  const { supervisor, worker, log } = setup(t);
  supervisor.start();
  for (let n = 0; n < 3; n++) {
    worker(n).ready();
    worker(n).exit({ code: 1 });
    await sleep(100 * 2 ** n + 50);
  }
  const delays = log
    .filter((line) => typeof line.delayMs === 'number' && /replacing it/.test(line.msg))
    .map((line) => line.delayMs);
  t.same(delays, [100, 200, 400]);
  t.equal(supervisor.stats.crashes, 3);
});

t.test('a first worker not ready within the startup timeout is killed and counts as a crash', async (t) => {
  const { supervisor, worker, log } = setup(t, { startupTimeoutMs: 20, crashLimit: 0 });
  supervisor.start();
  t.equal(await supervisor.done, 3, 'with a limit of 0 crashes, the first one ends it');
  t.same(worker(0).signals, ['SIGKILL']);
  t.ok(log.some((line) => /not ready within the startup timeout of 20ms/.test(line.msg)));
  t.notOk(
    log.some((line) => line.msg === 'ready'),
    'never ready',
  );
});

t.test('a saved configuration reaches every worker before the one that saved it hears so', async (t) => {
  const { supervisor, worker } = setup(t);
  supervisor.start();
  worker(0).ready();
  await settle();
  worker(0).drainsAtOnce = false;
  supervisor.restart('API');
  worker(1).ready();
  await settle();
  const config = testConfiguration();
  config.options.progressUpdateIntervalS = 7;
  worker(0).say({ type: 'syncd:config-save', seq: 1, config, base: 1 });
  const types = (n: number) =>
    worker(n)
      .sent.map((message) => message.type)
      .filter((type) => type.startsWith('syncd:config'));
  // The save writes config.json: on a loaded machine that takes its time.
  for (let waited = 0; waited < 10_000 && !types(0).includes('syncd:config-answer'); waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.same(types(0), ['syncd:config', 'syncd:config-answer'], 'the saver: the configuration, then the answer');
  t.same(types(1), ['syncd:config'], 'the other worker: the configuration');
  t.match(worker(1).received('syncd:config')[0], {
    revision: 2,
    config: { options: { progressUpdateIntervalS: 7 } },
  });
  t.match(worker(0).received('syncd:config-answer')[0], { seq: 1, answer: { ok: true, revision: 2 } });

  // A save from a revision that is no longer the latest is refused, and nobody is told of a change.
  worker(1).say({ type: 'syncd:config-save', seq: 1, config, base: 1 });
  for (
    let waited = 0;
    waited < 10_000 && worker(1).received('syncd:config-answer').length === 0;
    waited += 20
  ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.match(worker(1).received('syncd:config-answer')[0], { answer: { ok: false, status: 409 } });
  t.equal(worker(0).received('syncd:config').length, 1);
  const [init] = (() => {
    supervisor.restart('API');
    return worker(2).received('syncd:init');
  })();
  t.match(
    init?.init,
    { configRevision: 2, config: { options: { progressUpdateIntervalS: 7 } } },
    'a new worker starts with it',
  );
});
