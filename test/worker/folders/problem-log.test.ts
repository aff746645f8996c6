import { Writable } from 'node:stream';
import t from 'tap';
import { createLogger } from '../../../shared/logger.ts';
import { RecentErrors } from '../../../shared/recent-errors.ts';
import { ProblemLog } from '../../../worker/folders/problem-log.ts';

t.test(
  'a pull problem found at every retry: warned once, then every 10 minutes; its end told at info',
  async (t) => {
    const lines: Array<{ level: number; msg: string }> = [];
    const recent = new RecentErrors();
    let warned = 0;
    const logger = createLogger(
      'worker',
      'info',
      (error, slot) => {
        warned++;
        recent.add(error, slot);
      },
      new Writable({
        write: (chunk: Buffer, _encoding, done) => {
          lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
          done();
        },
      }),
    );
    let now = 0;
    const log = new ProblemLog({
      logger,
      folder: 'f',
      slot: 'folder-f-pull',
      text: (p) => `folder f: cannot pull ${p.name}: ${p.error}`,
      over: (name) => `folder f: ${name} no longer fails to pull`,
      now: () => now,
    });
    const messages = () => lines.splice(0).map((line) => `${line.level} ${line.msg}`);
    const stuck = { name: 'a.txt', error: 'no connected device has the required version of this file' };

    log.report([stuck, { name: 'b.txt', error: 'permission denied' }]);
    t.same(messages(), [
      `40 folder f: cannot pull a.txt: ${stuck.error}`,
      '40 folder f: cannot pull b.txt: permission denied',
    ]);
    // A retry every 10 s.
    for (let i = 0; i < 59; i++) {
      now += 10_000;
      log.report([stuck, { name: 'b.txt', error: 'permission denied' }]);
    }
    t.same(messages(), [], 'the same problems again: nothing');
    now += 10_000;
    log.report([stuck, { name: 'b.txt', error: 'no space left on device' }]);
    t.same(messages(), [
      `40 folder f: cannot pull a.txt: ${stuck.error} (repeated 59 times in the last 10 min)`,
      '40 folder f: cannot pull b.txt: no space left on device',
    ]);
    log.report([stuck]);
    t.same(messages(), ['30 folder f: b.txt no longer fails to pull'], 'b.txt is over');
    t.equal(warned, 4, 'of 122 problems found, 4 reach the recent errors');
    t.match(
      recent.list(),
      [{ message: /b\.txt: no space left on device/ }],
      'in the slot of the folder’s pulls',
    );
  },
);

t.test('a scan of part of the folder ends no problem outside it', async (t) => {
  const lines: string[] = [];
  const logger = createLogger(
    'worker',
    'info',
    undefined,
    new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        lines.push((JSON.parse(chunk.toString()) as { msg: string }).msg);
        done();
      },
    }),
  );
  const log = new ProblemLog({
    logger,
    folder: 'f',
    slot: 'folder-f',
    text: (p) => `${p.name}: ${p.error}`,
    over: (name) => `${name} over`,
    now: () => 0,
  });
  log.report([{ name: 'a/x', error: 'unreadable' }]);
  log.report([], (name) => name.startsWith('b/'));
  log.report([{ name: 'a/x', error: 'unreadable' }]);
  t.same(lines, ['a/x: unreadable'], 'still remembered: not logged again');
});
