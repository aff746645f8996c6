// options.setLowPriority as Syncthing applies it, with real processes: the worker lowers every one of
// its threads to Syncthing's niceness once ready, the supervisor keeps its own, and a change of the
// option takes effect with the next worker (a restart is required, and said so). A worker starved of
// CPU is not taken for hung.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import { execa } from 'execa';
import t from 'tap';
import { LOW_PRIORITY_NICENESS } from '../../../worker/low-priority.ts';
import { api, call, startService, withNewWorker } from '../../helpers/service.ts';

const skip = process.platform === 'linux' ? false : 'thread priorities are read from /proc, on Linux';

/** The niceness of each thread of `pid`. */
async function niceness(pid: number): Promise<number[]> {
  const tasks = await readdir(`/proc/${pid}/task`);
  const values = await Promise.all(
    tasks.map(async (task) => {
      const stat = await readFile(`/proc/${pid}/task/${task}/stat`, 'utf8').catch(() => undefined);
      return stat === undefined ? undefined : Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    }),
  );
  return values.filter((value) => value !== undefined);
}

t.test(
  'the worker runs at low priority by default, and at its supervisor’s once the option is off',
  { skip },
  async (t) => {
    const service = await startService(t);
    const supervisorBefore = await niceness(service.supervisorPid as number);
    const worker = await service.workerPid();
    const lowered = await niceness(worker);
    t.ok(lowered.length > 1, 'the worker has threads');
    t.ok(
      lowered.every((value) => value >= LOW_PRIORITY_NICENESS),
      `every thread of the worker at niceness ${LOW_PRIORITY_NICENESS} or more (${lowered.join(' ')})`,
    );
    t.ok(
      supervisorBefore.every((value) => value < LOW_PRIORITY_NICENESS),
      'the supervisor keeps its priority',
    );

    await api(service, 'PATCH', '/rest/config/options', { setLowPriority: false });
    t.same(await api(service, 'GET', '/rest/config/restart-required'), { requiresRestart: true });
    await withNewWorker(service, () => api(service, 'POST', '/rest/system/restart'));
    const next = await service.workerPid();
    t.not(next, worker, 'a new worker');
    const kept = await niceness(next);
    t.ok(
      kept.every((value) => value === supervisorBefore[0]),
      `the new worker keeps the priority it was started with (${kept.join(' ')})`,
    );
    t.same(await api(service, 'GET', '/rest/config/restart-required'), { requiresRestart: false });
  },
);

/** How long the main thread of `pid` has waited for a CPU in all, in ms. */
async function cpuWait(pid: number): Promise<number> {
  return Number((await readFile(`/proc/${pid}/schedstat`, 'utf8')).split(' ')[1]) / 1e6;
}

t.test('a worker starved of CPU by busier processes is not taken for hung', { skip }, async (t) => {
  const service = await startService(t, { env: { SYNCD_HEARTBEAT_TIMEOUT: '1s' } });
  const worker = await service.workerPid();
  // For 4 s, the worker (every thread of it at SCHED_IDLE) and four busy processes share one core: the
  // worker's event loop gets it only now and then, and answers heartbeats seconds late. The
  // supervisor, free to run on the others, goes on asking; other tests have them too.
  await execa('chrt', ['--idle', '--all-tasks', '--pid', '0', String(worker)]);
  await execa('taskset', ['--all-tasks', '--cpu-list', '--pid', '0', String(worker)]);
  const before = await cpuWait(worker);
  const busy = [0, 1, 2, 3].map(() =>
    spawn('taskset', [
      '--cpu-list',
      '0',
      process.execPath,
      '-e',
      'const end = Date.now() + 4000; while (Date.now() < end);',
    ]),
  );
  t.teardown(() => busy.forEach((child) => child.kill('SIGKILL')));
  await Promise.all(busy.map((child) => once(child, 'exit')));
  t.equal(await service.workerPid(), worker, 'the same worker');
  const status = (await call(service, 'GET', '/rest/system/status')).body;
  t.equal(status.supervisor.crashes, 0, 'no crash');
  // Read once it has answered: Linux counts a wait once it is over.
  const waited = (await cpuWait(worker)) - before;
  t.ok(waited > 1000, `the worker waited for a CPU longer than the timeout (${Math.round(waited)} ms)`);
});
