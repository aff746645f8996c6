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

t.test('past maxKeys things, a new one is logged once a period, saying how many were not', async (t) => {
  let now = 0;
  const log = new RateLimitedLog({ now: () => now, maxKeys: 2, everyMs: 1000 });
  t.equal(log.note('a', 'x'), '');
  t.equal(log.note('b', 'x'), '');
  t.equal(log.note('a', 'x'), undefined, 'a heard again, within the period');
  t.match(log.note('c', 'x'), /^ \(more than 2 things are being reported: one a 1 min is logged\)$/);
  for (const key of ['d', 'e', 'f']) t.equal(log.note(key, 'x'), undefined, `${key}: not one by one`);
  t.same(log.keys().sort(), ['a', 'b'], 'the ones remembered stay');
  now = 1000;
  t.match(log.note('g', 'x'), /, 3 others were not\)$/, 'the next period: one more, and the count');
  t.equal(log.cleared('b'), true);
  t.equal(log.note('h', 'x'), '', 'room again: logged as news');
});
