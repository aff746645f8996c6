import t from 'tap';
import { PullRetry } from '../../../worker/folders/pull-retry.ts';

t.test(
  'a failed pull is retried as Syncthing retries it: 60, 60, 120 … s, at most 64 times the base',
  async (t) => {
    const retry = new PullRetry(() => 60_000);
    const delays = [retry.failed(0, false)];
    for (let i = 0; i < 9; i++) delays.push(retry.failed(0, true));
    t.same(
      delays.map((ms) => ms / 1000),
      [60, 60, 120, 240, 480, 960, 1920, 3840, 3840, 3840],
    );
    t.equal(retry.failed(1500, true), 3_841_500, 'plus as long as the failed pull took');
    retry.succeeded();
    t.equal(retry.failed(0, false), 60_000, 'a pull that succeeds brings the pause back to the base');
    const short = new PullRetry(() => 2000);
    t.equal(short.failed(0, false), 2000, "the base is the folder's pullerPauseS when it is set");
  },
);
