// options.setLowPriority as Syncthing applies it, with real processes: the worker lowers every one of
// its threads to Syncthing's niceness as it starts, the supervisor keeps its own, and a change of the
// option takes effect with the next worker (a restart is required, and said so).
import { readdir, readFile } from 'node:fs/promises';
import t from 'tap';
import { LOW_PRIORITY_NICENESS } from '../../worker/low-priority.ts';
import { api, startService, withNewWorker } from '../helpers/service.ts';

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
