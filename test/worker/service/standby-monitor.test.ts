import t from 'tap';
import { StandbyMonitor } from '../../../worker/service/standby-monitor.ts';

t.test(
  'a clock that jumped more than two minutes between ticks restarts the worker a minute later',
  async (t) => {
    let now = 1_000_000;
    const restarts: number[] = [];
    const logged: string[] = [];
    let enabled = true;
    const monitor = new StandbyMonitor({
      enabled: () => enabled,
      restart: () => restarts.push(now),
      log: (message) => logged.push(message),
      now: () => now,
    });
    t.teardown(() => monitor.stop());
    now += 10_000;
    monitor.tick();
    now += 60_000;
    monitor.tick();
    t.same(logged, [], 'ticks a minute apart (a busy machine): nothing');
    enabled = false;
    now += 3 * 60_000;
    monitor.tick();
    t.same(logged, [], 'restartOnWakeup off: nothing');
    enabled = true;
    now += 3 * 60_000;
    monitor.tick();
    t.match(logged, [/possibly woke up from standby; restarting in 60 s/], 'a wake-up is told');
    t.same(restarts, [], 'and the restart waits for the network');
  },
);
