import t from 'tap';
import { CrashPolicy } from '../../supervisor/crash-policy.ts';

t.test('the delay doubles with consecutive crashes up to the maximum', async (t) => {
  const policy = new CrashPolicy({ limit: 100, windowMs: 60_000, baseDelayMs: 100, maxDelayMs: 1000 });
  const delays = Array.from({ length: 6 }, (_, i) => policy.record(i, 0));
  t.same(delays, [
    { delayMs: 100 },
    { delayMs: 200 },
    { delayMs: 400 },
    { delayMs: 800 },
    { delayMs: 1000 },
    { delayMs: 1000 },
  ]);
});

t.test('a worker that stayed up long enough starts the backoff over', async (t) => {
  const policy = new CrashPolicy({ limit: 100, windowMs: 60_000, stableMs: 30_000 });
  policy.record(0, 0);
  policy.record(1, 0);
  t.same(policy.record(40_000, 35_000), { delayMs: 100 });
});

t.test('more crashes than the limit within the window gives up', async (t) => {
  const policy = new CrashPolicy({ limit: 3, windowMs: 10_000 });
  for (let i = 0; i < 3; i++) t.ok('delayMs' in policy.record(i * 1000, 0));
  t.match(policy.record(3000, 0), { giveUp: /4 worker crashes within 10s \(limit 3\)/ });
});

t.test('crashes older than the window are forgotten', async (t) => {
  const policy = new CrashPolicy({ limit: 2, windowMs: 10_000 });
  policy.record(0, 0);
  policy.record(1000, 0);
  t.ok('delayMs' in policy.record(11_000, 0), 'the first crash has left the window');
});
