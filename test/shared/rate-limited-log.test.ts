import t from 'tap';
import { RateLimitedLog, REPEAT_EVERY_MS } from '../../shared/rate-limited-log.ts';

t.test('the same message is logged once, then once per period with how often it came', async (t) => {
  let now = 0;
  const log = new RateLimitedLog({ now: () => now });
  t.equal(log.note('a', 'failed'), '', 'the first time, at once');
  for (let i = 0; i < 59; i++) {
    now += 10_000;
    t.equal(log.note('a', 'failed'), undefined);
  }
  t.equal(log.note('b', 'failed'), '', 'about another thing, at once');
  now = REPEAT_EVERY_MS;
  t.equal(log.note('a', 'failed'), ' (repeated 59 times in the last 10 min)');
  t.equal(log.note('a', 'failed'), undefined, 'and quiet again');
  t.equal(log.note('a', 'failed otherwise'), '', 'a changed message, at once');
  now += 2 * REPEAT_EVERY_MS;
  t.equal(log.note('a', 'failed otherwise'), '', 'due again with no repeat between: nothing to add');
  t.equal(log.cleared('a'), true, 'it had been logged');
  t.equal(log.cleared('a'), false);
  t.equal(log.note('a', 'failed otherwise'), '', 'over, then back: news');
});

t.test('at most maxKeys things are remembered, the longest unheard of forgotten', async (t) => {
  const log = new RateLimitedLog({ now: () => 0, maxKeys: 2 });
  log.note('a', 'x');
  log.note('b', 'x');
  t.equal(log.note('a', 'x'), undefined, 'a heard again');
  log.note('c', 'x');
  t.same(log.keys().sort(), ['a', 'c'], 'b went');
  t.equal(log.note('b', 'x'), '');
});
