// A folder whose filesystem stops answering (a dead mount, made with FUSE), in process with a real
// index, hashing threads and runner: what waits on the folder is answered within the timeout, its
// turn goes back, and it goes on once the filesystem answers again.
import { mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { FOLDER_DEFAULTS } from '../../../shared/config/defaults.ts';
import { EventLog } from '../../../worker/events/event-log.ts';
import { NotAnsweringError } from '../../../worker/files/root-probe.ts';
import { FolderRunner, type FolderRunnerOptions } from '../../../worker/folders/folder-runner.ts';
import { IoLimiter } from '../../../worker/folders/io-limiter.ts';
import { silentLogger } from '../../helpers/app.ts';
import { deadMount, deadMountUnavailable } from '../../helpers/dead-mount.ts';
import { indexedFolder } from '../../helpers/indexed-folder.ts';

const TIMEOUT_MS = 500;
const skip = (await deadMountUnavailable()) ?? false;

async function runnerFor(
  t: Test,
  path: string,
  options: Partial<FolderRunnerOptions> & Pick<FolderRunnerOptions, 'db' | 'hasher'>,
) {
  const limiter = new IoLimiter(1);
  const runner = new FolderRunner(
    { ...FOLDER_DEFAULTS, id: 'f', path, rescanIntervalS: 0, fsWatcherEnabled: false },
    {
      events: new EventLog(),
      shortId: 7n,
      logger: silentLogger(),
      limiter,
      answerTimeoutMs: TIMEOUT_MS,
      ...options,
    },
  );
  t.teardown(() => runner.stop());
  return { runner, limiter };
}

// How long `promise` took to settle, in ms.
async function timed(promise: Promise<unknown>): Promise<number> {
  const started = performance.now();
  await promise;
  return performance.now() - started;
}

t.test('a folder on a mount that does not answer is in error within the timeout', { skip }, async (t) => {
  const { db, hasher, path: indexed } = await indexedFolder(t, { shortId: 7n });
  const path = join(indexed, '..', 'mnt');
  await mkdir(path);
  const mount = await deadMount(t, path);
  const { runner, limiter } = await runnerFor(t, path, { db, hasher });

  const first = await timed(runner.scan());
  // Timers start from the loop's cached clock: one may end a little before its time as measured here.
  t.ok(first >= TIMEOUT_MS - 100 && first < 10 * TIMEOUT_MS, `the scan asked for is answered (${first} ms)`);
  t.equal(runner.state, 'error');
  t.match(
    runner.error,
    /^the folder's filesystem is not answering: a stat of .*mnt has waited more than 0.5 s/,
  );
  t.equal(limiter.held, 0, 'no turn held');
  const again = await timed(runner.scan());
  t.ok(again < TIMEOUT_MS, `the next is answered at once (${again} ms)`);
  await t.rejects(
    runner.answering(() => readFile(join(path, '.stignore'))),
    NotAnsweringError,
  );

  // Its connection aborted, the mount answers again, with an error (once the stat out has returned).
  mount.end();
  for (let i = 0; i < 100 && /not answering/.test(runner.error ?? ''); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    await runner.scan();
  }
  t.match(runner.error, /cannot be used: ENOTCONN/, 'the answer it gives is the reason now');
});

t.test(
  'a pull whose filesystem stops answering is given up on: its turn goes back, who waits is answered',
  { skip },
  async (t) => {
    const { db, hasher, path } = await indexedFolder(t, { tree: { 'a.txt': 'a' }, shortId: 7n });
    let mount: Awaited<ReturnType<typeof deadMount>> | undefined;
    let pulling: () => void = () => {};
    const started = new Promise<void>((resolve) => (pulling = resolve));
    const { runner, limiter } = await runnerFor(t, path, {
      db,
      hasher,
      // The folder's disk goes as the pull begins: what it then reads waits.
      pull: async () => {
        mount = await deadMount(t, path);
        pulling();
        await stat(join(path, 'a.txt'));
        return { pulled: 0, problems: [], toScan: [] };
      },
    });
    await runner.scan();
    t.equal(runner.state, 'idle');

    runner.pullSoon();
    await started;
    t.equal(runner.state, 'syncing');
    t.equal(limiter.held, 1, 'the pull holds the turn');
    const waited = await timed(runner.scan());
    t.ok(waited < 10 * TIMEOUT_MS, `a scan asked for meanwhile is answered (${waited} ms)`);
    t.equal(runner.state, 'error');
    t.match(runner.error, /not answering/);
    t.equal(limiter.held, 0, 'the turn went back');
    t.ok(
      (await timed(runner.scan())) < TIMEOUT_MS,
      'a scan asked for while the pull is out is answered at once',
    );
    await t.rejects(runner.override(), NotAnsweringError, 'so is an override');
    runner.reconfigure({ ...runner.config, paused: true });
    runner.reconfigure({ ...runner.config, paused: false });
    await runner.scan();
    t.equal(runner.state, 'error', 'paused and resumed meanwhile, it is still in error');

    // The disk back: the pull returns (failing), and the folder is looked at again by itself.
    await mount?.remove();
    await runner.settled;
    for (let i = 0; i < 100 && runner.state !== 'idle'; i++) await new Promise((r) => setTimeout(r, 50));
    t.equal(runner.state, 'idle', 'scanned again once the pull returned');
    t.equal(runner.error, undefined);
  },
);

t.test('a request that finds an idle folder not answering puts it in error too', { skip }, async (t) => {
  const { db, hasher, path: indexed } = await indexedFolder(t, { shortId: 7n });
  const path = join(indexed, '..', 'idle');
  await mkdir(path);
  const { runner } = await runnerFor(t, path, { db, hasher });
  await runner.scan();
  t.equal(runner.state, 'idle');
  await deadMount(t, path);
  await t.rejects(
    runner.answering(() => stat(path)),
    NotAnsweringError,
  );
  t.equal(runner.state, 'error', 'its status says what the answer said');
  t.match(runner.error, /not answering/);
});
