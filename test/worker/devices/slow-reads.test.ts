// When blocks go through libuv's threads: after reads that keep taking long (a disk), not after one
// (a thread preempted on a busy machine).
import t from 'tap';
import { SlowReads } from '../../../worker/devices/slow-reads.ts';

t.test('one slow read now and then keeps reads at once', async (t) => {
  const reads = new SlowReads();
  for (let now = 0; now < 10_000; now += 600) {
    reads.record(5, now);
    t.notOk(reads.throughThreads(now), `at ${now} ms`);
  }
  reads.record(2, 10_000);
  reads.record(1.9, 10_001);
  t.notOk(reads.throughThreads(10_001), 'reads within the limit never count');
});

t.test('three slow reads within a second send reads through the threads for 10 s', async (t) => {
  const reads = new SlowReads();
  reads.record(5, 1000);
  reads.record(0.1, 1200);
  reads.record(8, 1500);
  t.notOk(reads.throughThreads(1500), 'two are not enough');
  reads.record(3, 1999);
  t.ok(reads.throughThreads(1999), 'the third within the second is');
  t.ok(reads.throughThreads(11_998), 'for 10 s');
  t.notOk(reads.throughThreads(11_999), 'then reads at once again');
  reads.record(5, 12_000);
  reads.record(5, 12_100);
  t.notOk(reads.throughThreads(12_100), 'counted afresh');
});

t.test('slow reads further apart than a second do not add up', async (t) => {
  const reads = new SlowReads();
  reads.record(5, 0);
  reads.record(5, 600);
  reads.record(5, 1000);
  t.notOk(reads.throughThreads(1000), 'the first has left the window');
  reads.record(5, 1100);
  t.ok(reads.throughThreads(1100));
});
