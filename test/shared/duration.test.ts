import t from 'tap';
import { parseDuration } from '../../shared/duration.ts';

t.test('durations are read with units, a bare number in seconds', async (t) => {
  t.equal(parseDuration('500ms'), 500);
  t.equal(parseDuration('10s'), 10_000);
  t.equal(parseDuration('1.5s'), 1500);
  t.equal(parseDuration('2m'), 120_000);
  t.equal(parseDuration('3'), 3000);
  for (const bad of ['', 'ms', '-1s', '1h', 'ten', '1e3']) t.equal(parseDuration(bad), undefined, bad);
});
