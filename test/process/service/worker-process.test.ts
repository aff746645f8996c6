// The worker started before the supervisor is ready for it (startWorkerEarly): what it reports before
// it is adopted reaches the supervisor after the adoption, in order.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { WorkerExit } from '../../../supervisor/worker-handle.ts';
import { startWorkerEarly, WORKER_FLAGS } from '../../../supervisor/worker-process.ts';
import { isAlive, waitFor } from '../../helpers/service.ts';

t.test('a worker that exits while it loads is reported once adopted, not during adopt()', async (t) => {
  const entry = join(t.testdir(), 'exits.mjs');
  await writeFile(entry, "process.stderr.write('cannot start: a test\\n'); process.exit(3);\n");
  const early = startWorkerEarly({ entry });
  // Gone before it is adopted (bounded generously: a loaded machine starts Node slowly), and a moment
  // more for its stderr to close, after which its exit is reported.
  await waitFor('the worker gone', async () => (isAlive(early.pid) ? undefined : true), 20_000);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const exits: WorkerExit[] = [];
  const handle = early.adopt({ onMessage: () => {}, onExit: (_worker, exit) => exits.push(exit) });
  t.same(exits, [], 'nothing during adopt(): the caller registers the handle first');
  await waitFor('its exit reported', async () => (exits.length > 0 ? true : undefined), 10_000);
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.equal(exits.length, 1, 'then the exit, once');
  t.match(exits[0], { code: 3, lastStderrLine: 'cannot start: a test' });
  t.ok(handle.pid > 0);
});

t.test('a worker never adopted is ended by discard()', async (t) => {
  const entry = join(t.testdir(), 'waits.mjs');
  await writeFile(entry, 'setInterval(() => {}, 1000);\n');
  const early = startWorkerEarly({ entry });
  const exits: WorkerExit[] = [];
  early.discard();
  early.adopt({ onMessage: () => {}, onExit: (_worker, exit) => exits.push(exit) });
  await waitFor('its exit reported', async () => (exits.length > 0 ? true : undefined), 10_000);
  t.match(exits, [{ signal: 'SIGKILL', killReason: 'the supervisor did not start' }]);
  t.notOk(isAlive(early.pid));
});

t.test("the worker runs with the worker's V8 flags", async (t) => {
  const entry = join(t.testdir(), 'flags.mjs');
  await writeFile(
    entry,
    "process.stderr.write(JSON.stringify(process.execArgv) + '\\n'); process.exit(3);\n",
  );
  const early = startWorkerEarly({ entry });
  const exits: WorkerExit[] = [];
  early.adopt({ onMessage: () => {}, onExit: (_worker, exit) => exits.push(exit) });
  await waitFor('its exit reported', async () => (exits.length > 0 ? true : undefined), 20_000);
  const flags = JSON.parse(exits[0]?.lastStderrLine ?? '[]') as string[];
  t.ok(WORKER_FLAGS.length > 0);
  for (const flag of WORKER_FLAGS) t.ok(flags.includes(flag), `${flag} in ${flags.join(' ')}`);
});
