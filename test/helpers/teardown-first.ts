/*
 * tap removes a test's t.testdir() before running its t.teardown()s when testdir was called first,
 * and drops the teardowns left when that removal fails: a service or a Syncthing still writing in the
 * folder then makes it fail (ENOTEMPTY), and the processes are never stopped. A teardown registered
 * as each test starts puts the teardowns first: processes stop, then the folder goes. Imported by the
 * helpers that start processes or services; only under tap's runner (TAP=1), since the benchmarks
 * use the same helpers and must not start a tap test of their own.
 */
if (process.env.TAP === '1') {
  const { default: t } = await import('tap');
  t.beforeEach((child) => {
    child.teardown(() => {});
  });
}

/** What the helpers need of a tap test: a teardown (benchmarks pass their own). */
export interface Teardown {
  teardown(fn: () => unknown): void;
}

/**
 * The environment for a tap run started from a test (a fresh project's, `tap list`): without this
 * run's TAP_* settings and loaders, so that it does not take itself for part of this run.
 */
export function outsideTap(): Record<string, string | undefined> {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('TAP') && name !== 'NODE_OPTIONS'),
  );
}
