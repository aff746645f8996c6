import t from 'tap';
import { AuthFailures, clientOf } from '../../../worker/http/auth-failures.ts';

t.test('past the limit within the window a client must wait, until the window passes', async (t) => {
  let now = 0;
  const failures = new AuthFailures({ limit: 3, windowMs: 60_000, now: () => now });
  for (let i = 0; i < 3; i++) {
    t.equal(failures.retryAfter('10.0.0.1'), 0, `try ${i + 1} allowed`);
    failures.record('10.0.0.1');
    now += 1000;
  }
  t.equal(failures.retryAfter('10.0.0.1'), 57, 'until the oldest failure is a minute old');
  t.equal(failures.retryAfter('10.0.0.2'), 0, 'another client is not affected');
  now = 60_001;
  t.equal(failures.retryAfter('10.0.0.1'), 0, 'free again once the window has passed');
});

t.test('all of loopback is one client, and so is an IPv6 /64', async (t) => {
  const failures = new AuthFailures({ limit: 3, now: () => 0 });
  for (const address of ['127.0.0.1', '127.0.0.2', '::ffff:127.9.9.9']) failures.record(address);
  t.ok(failures.retryAfter('127.1.2.3') > 0, 'a fourth loopback address is the same client');
  t.ok(failures.retryAfter('::1') > 0);
  t.equal(clientOf('2001:db8:1:2::5'), clientOf('2001:db8:1:2:ffff::9'));
  t.equal(clientOf('2001:db8:1:2::5'), '2001:db8:1:2::/64');
  t.not(clientOf('2001:db8:1:3::5'), clientOf('2001:db8:1:2::5'));
  t.equal(clientOf('::ffff:10.1.2.3'), '10.1.2.3');
});

t.test('failures from many clients together hit a global limit', async (t) => {
  const failures = new AuthFailures({ limit: 10, globalLimit: 50, now: () => 0 });
  for (let i = 0; i < 50; i++) failures.record(`10.0.${i}.1`);
  t.ok(failures.retryAfter('10.9.9.9') > 0, 'a new client is slowed too');
});

t.test('one log line per window for all clients, saying how many came since the last', async (t) => {
  let now = 0;
  const failures = new AuthFailures({ windowMs: 60_000, now: () => now });
  t.same(failures.record('10.0.0.1'), { log: true, since: 0 });
  t.same(failures.record('10.0.0.1'), { log: false });
  t.same(failures.record('10.0.0.2'), { log: false }, 'another client is no reason for another line');
  now = 59_000;
  t.same(failures.record('10.0.0.3'), { log: false });
  now = 61_000;
  t.same(failures.record('10.0.0.1'), { log: true, since: 3 }, 'a minute later, one more, with the count');
});

t.test('the clients remembered are bounded', async (t) => {
  const failures = new AuthFailures({ limit: 1, maxClients: 2 });
  failures.record('10.0.0.1');
  failures.record('10.0.0.2');
  failures.record('10.0.0.3');
  t.equal(failures.retryAfter('10.0.0.1'), 0, 'the oldest is forgotten');
  t.ok(failures.retryAfter('10.0.0.3') > 0);
});
