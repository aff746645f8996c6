// The worker's log behind /rest/system/log and its debug switches, as Syncthing's GUI and clients
// use them, in-process: a real pino logger writing into the buffer.
import t, { type Test } from 'tap';
import { Writable } from 'node:stream';
import { buildApp } from '../../../worker/http/app.ts';
import { createLogger } from '../../../shared/logger.ts';
import { LOG_BUFFER_FIRST, LOG_BUFFER_LINES, LogBuffer, parseSince } from '../../../shared/log-buffer.ts';
import { DebugFacilities, FACILITIES } from '../../../shared/debug-facilities.ts';
import { appOptions, injector } from '../../helpers/app.ts';

async function setup(t: Test, trace: string[] = []) {
  const buffer = new LogBuffer();
  const stdout: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      stdout.push(String(chunk));
      done();
    },
  });
  const logger = createLogger('worker', 'info', () => {}, sink, buffer.stream());
  const facilities = new DebugFacilities(logger, trace);
  const app = buildApp(appOptions({ log: { buffer, facilities } }));
  await app.ready();
  t.teardown(() => app.close());
  return { app, call: injector(app), logger, facilities, stdout };
}

t.test(
  'LogBuffer: the first lines, the newest, a marker between; "after" exact within a millisecond',
  async (t) => {
    const buffer = new LogBuffer();
    for (let i = 0; i < LOG_BUFFER_LINES + 5; i++) buffer.add(1_000_000 + Math.floor(i / 3), `line ${i}`, 2);
    const all = buffer.since();
    t.equal(all.length, LOG_BUFFER_LINES + 1, 'the kept lines and the marker');
    t.same(
      all.slice(0, LOG_BUFFER_FIRST).map((line) => line.message),
      [...Array(LOG_BUFFER_FIRST).keys()].map((i) => `line ${i}`),
    );
    t.equal(all[LOG_BUFFER_FIRST]?.message, '...');
    t.equal(all.at(-1)?.message, `line ${LOG_BUFFER_LINES + 4}`);
    // Three lines share each millisecond: the fraction's extra digits tell them apart.
    const some = all.at(-3)!;
    t.match(some.when, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
    t.same(
      buffer.since(parseSince(some.when)).map((line) => line.message),
      all.slice(-2).map((line) => line.message),
    );
    t.same(buffer.since(parseSince('2100-01-01T00:00:00+02:00')), []);
    t.equal(parseSince('yesterday'), undefined);
    t.same(parseSince('1970-01-01T01:00:01.5+01:00'), { ms: 1500, seq: 0 }, 'any zone, any fraction');
  },
);

t.test('GET /rest/system/log and log.txt: the lines logged, after `since`', async (t) => {
  const { call, logger } = await setup(t);
  t.same((await call('GET', '/rest/system/log')).json(), { messages: null }, 'none yet: null, as Syncthing');
  logger.info('first');
  logger.warn(new Error('boom'), 'second');
  logger.debug('not at this level');
  const { messages } = (await call('GET', '/rest/system/log')).json();
  t.match(messages, [
    { message: 'first', level: 2 },
    { message: 'second: boom', level: 3 },
  ]);
  t.equal(messages.length, 2);
  const after = (await call('GET', `/rest/system/log?since=${encodeURIComponent(messages[0].when)}`)).json();
  t.same(
    after.messages.map((line: { message: string }) => line.message),
    ['second: boom'],
  );
  const text = await call('GET', '/rest/system/log.txt');
  t.match(text.text, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: first\n\S+Z: second: boom\n$/);
  const bad = await call('GET', '/rest/system/log?since=soon');
  t.equal(bad.status, 400);
  t.match(bad.json(), { code: 'SYNCD_ERR_INVALID_QUERY', message: /since must be an RFC 3339 time/ });
});

t.test('/rest/system/debug: facilities listed, switched on and off, unknown names accepted', async (t) => {
  const { call, facilities, stdout } = await setup(t, ['model', 'nonesuch']);
  t.same((await call('GET', '/rest/system/debug')).json(), { enabled: ['model'], facilities: FACILITIES });
  const posted = await call('POST', '/rest/system/debug?enable=connections,protocol,bogus&disable=model');
  t.same([posted.status, posted.text], [200, '']);
  t.same((await call('GET', '/rest/system/debug')).json().enabled, ['connections', 'protocol']);
  facilities.logger('protocol').debug('a message in');
  facilities.logger('model').debug('model: not on');
  const { messages } = (await call('GET', '/rest/system/log')).json();
  t.match(messages, [{ message: 'a message in', level: 0 }]);
  t.equal(messages.length, 1);
  t.match(
    stdout.join(''),
    /"facility":"protocol".*"msg":"a message in"/,
    'on standard output too, at level info',
  );
});

t.test('/rest/system/loglevels: Syncthing 2.x’s levels per facility', async (t) => {
  const { call, facilities } = await setup(t);
  const before = (await call('GET', '/rest/system/loglevels')).json();
  t.same(before.packages, FACILITIES);
  t.equal(before.levels.model, 'INFO');
  t.equal(
    (await call('POST', '/rest/system/loglevels', { model: 'debug', discover: 'WARN', other: 'ERROR' }))
      .status,
    200,
  );
  t.match((await call('GET', '/rest/system/loglevels')).json().levels, {
    model: 'DEBUG',
    discover: 'WARN',
    main: 'INFO',
  });
  t.same(facilities.enabled(), ['model']);
  t.equal(facilities.logger('discover').level, 'warn', 'a facility can also be quieter');
  const bad = await call('POST', '/rest/system/loglevels', { model: 'LOUD' });
  t.equal(bad.status, 400);
  t.match(bad.json().message, /model: the level must be one of DEBUG, INFO, WARN, ERROR, not "LOUD"/);
  t.equal((await call('POST', '/rest/system/loglevels', '[1]')).status, 400);
});
