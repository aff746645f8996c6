import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { HASHING_NICENESS } from '../../../worker/scanner/hash-thread.ts';
import { HasherPool } from '../../../worker/scanner/hasher-pool.ts';

// A task's niceness, field 19 of its stat line (counted after the name, which may hold spaces).
async function niceness(path: string): Promise<number> {
  const stat = await readFile(path, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

t.test(
  "hashing threads run below the worker's own thread, which keeps its priority",
  { skip: process.platform === 'linux' ? false : 'thread priorities are set on Linux only' },
  async (t) => {
    const dir = t.testdir();
    const file = join(dir, 'data');
    await writeFile(file, Buffer.alloc(64 * 1024, 1));
    const before = await niceness('/proc/self/stat');
    // Relative to the runner's own niceness (`nice -n 10 npm test` starts at 10), at most 19.
    const expected = Math.min(19, before + HASHING_NICENESS);
    if (expected === before) {
      t.pass(`the runner's niceness is ${before}: no thread can be below it`);
      return;
    }
    const pool = new HasherPool(2);
    t.teardown(() => pool.close());
    pool.warm();
    t.equal((await pool.hash(file, 64 * 1024, 128 * 1024)).length, 1, 'the pool hashes');
    // A thread lowers itself as its module loads: polled, within a bound, until both have.
    let lowered = 0;
    for (const until = Date.now() + 10_000; lowered < 2 && Date.now() < until;) {
      const tasks = await readdir('/proc/self/task');
      const values = await Promise.all(
        tasks.map((task) => niceness(`/proc/self/task/${task}/stat`).catch(() => 0)),
      );
      lowered = values.filter((value) => value === expected).length;
      if (lowered < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    t.equal(lowered, 2, 'both threads lowered');
    t.equal(await niceness('/proc/self/stat'), before, "the worker's own thread as it was");
  },
);
