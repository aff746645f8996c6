import t from 'tap';
import { AuthFailures } from '../../worker/auth-failures.ts';

t.test('past the limit within the window a client must wait, until the window passes', async (t) => {
  let now = 0;
  const failures = new AuthFailures({ limit: 3, windowMs: 60_000, now: () => now });
  for (let i = 0; i < 3; i++) {
    t.equal(failures.retryAfter('a'), 0, `try ${i + 1} allowed`);
    failures.record('a');
    now += 1000;
  }
  t.equal(failures.retryAfter('a'), 57, 'until the oldest failure is a minute old');
  t.equal(failures.retryAfter('b'), 0, 'another client is not affected');
  now = 60_001;
  t.equal(failures.retryAfter('a'), 0, 'free again once the window has passed');
});

t.test('only the first failure of a window is worth a log line', async (t) => {
  let now = 0;
  const failures = new AuthFailures({ windowMs: 60_000, now: () => now });
  t.equal(failures.record('a'), true);
  t.equal(failures.record('a'), false);
  now = 59_000;
  t.equal(failures.record('a'), false);
  now = 61_000;
  t.equal(failures.record('a'), true, 'a minute later, one more');
  t.equal(failures.record('b'), true, 'per client');
});

t.test('the clients remembered are bounded', async (t) => {
  const failures = new AuthFailures({ limit: 1, maxClients: 2 });
  failures.record('a');
  failures.record('b');
  failures.record('c');
  t.equal(failures.retryAfter('a'), 0, 'the oldest is forgotten');
  t.ok(failures.retryAfter('c') > 0);
});
