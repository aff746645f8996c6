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
