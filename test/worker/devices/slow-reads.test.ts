// When blocks go through libuv's threads: after reads that keep taking long (a disk), not after one
// (a thread preempted on a busy machine).
import t from 'tap';
import { SlowReads } from '../../../worker/devices/slow-reads.ts';

/** `reads` after reads that took `ms`, each ending `at` (ms). */
function after(reads: SlowReads, ...timed: Array<[ms: number, at: number]>): SlowReads {
  for (const [ms, at] of timed) reads.record(ms, at);
  return reads;
}

t.test('one slow read now and then keeps reads at once', async (t) => {
  const reads = new SlowReads();
  for (let now = 0; now < 10_000; now += 600) {
    after(reads, [20, now]);
    t.notOk(reads.throughThreads(now), `at ${now} ms`);
  }
  after(reads, [5, 10_000], [3.5, 10_001], [4.9, 10_002]);
  t.notOk(reads.throughThreads(10_002), 'reads within 5 ms never count');
});

t.test('three slow reads within a second send reads through the threads for 10 s', async (t) => {
  const reads = after(new SlowReads(), [6, 1000], [0.1, 1200], [8, 1500]);
  t.notOk(reads.throughThreads(1500), 'two are not enough');
  after(reads, [30, 1999]);
  t.ok(reads.throughThreads(1999), 'the third within the second is');
  t.ok(reads.throughThreads(11_998), 'for 10 s');
  t.notOk(reads.throughThreads(11_999), 'then reads at once again');
  after(reads, [6, 12_000], [6, 12_100]);
  t.notOk(reads.throughThreads(12_100), 'counted afresh');
});

t.test('slow reads further apart than a second do not add up', async (t) => {
  const reads = after(new SlowReads(), [6, 0], [6, 600], [6, 1000]);
  t.notOk(reads.throughThreads(1000), 'the first has left the window');
  after(reads, [6, 1100]);
  t.ok(reads.throughThreads(1100));
});
