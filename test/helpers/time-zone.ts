import type { Teardown } from './teardown-first.ts';

/**
 * Runs the rest of test `t` in time zone `zone` (Node reads TZ again when it is set), and restores the
 * zone after it: tests share their process with other files (see in-process.ts), so none may leave
 * its zone behind.
 */
export function inTimeZone(t: Teardown, zone: string): void {
  const saved = process.env.TZ;
  process.env.TZ = zone;
  t.teardown(() => {
    if (saved === undefined) delete process.env.TZ;
    else process.env.TZ = saved;
  });
}
