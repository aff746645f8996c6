import { randomBytes } from 'node:crypto';
import t from 'tap';
import { copyBytes } from '../../../worker/files/copy-bytes.ts';

t.test('bytes are copied exactly where asked, into shared memory and not, at any alignment', async (t) => {
  for (const shared of [true, false]) {
    const target = shared ? Buffer.from(new SharedArrayBuffer(1000)) : Buffer.alloc(1000);
    const expected = Buffer.alloc(1000);
    const source = randomBytes(300);
    for (const [from, length, at] of [
      [3, 100, 5],
      [0, 300, 600],
      [7, 1, 999],
      [0, 0, 10],
    ] as const) {
      copyBytes(source.subarray(from, from + length), target, at);
      source.copy(expected, at, from, from + length);
    }
    t.ok(Buffer.from(target).equals(expected), `${shared ? 'shared' : 'own'} memory: nothing else touched`);
  }
});
