// The worker started before the supervisor is ready for it (startWorkerEarly): what it reports before
// it is adopted reaches the supervisor after the adoption, in order.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { WorkerExit } from '../../supervisor/worker-handle.ts';
import { startWorkerEarly } from '../../supervisor/worker-process.ts';

t.test('a worker that exits while it loads is reported once adopted, not during adopt()', async (t) => {
  const entry = join(t.testdir(), 'exits.mjs');
  await writeFile(entry, "process.stderr.write('cannot start: a test\\n'); process.exit(3);\n");
  const early = startWorkerEarly({ entry });
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const exits: WorkerExit[] = [];
  const handle = early.adopt({ onMessage: () => {}, onExit: (_worker, exit) => exits.push(exit) });
  t.same(exits, [], 'nothing during adopt(): the caller registers the handle first');
  await new Promise((resolve) => setTimeout(resolve, 1000));
  t.equal(exits.length, 1, 'then the exit, once');
  t.match(exits[0], { code: 3, lastStderrLine: 'cannot start: a test' });
  t.ok(handle.pid > 0);
});

t.test('a worker never adopted is ended by discard()', async (t) => {
  const entry = join(t.testdir(), 'waits.mjs');
  await writeFile(entry, 'setInterval(() => {}, 1000);\n');
  const early = startWorkerEarly({ entry });
  const exits: WorkerExit[] = [];
  await new Promise((resolve) => setTimeout(resolve, 500));
  early.discard();
  early.adopt({ onMessage: () => {}, onExit: (_worker, exit) => exits.push(exit) });
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.match(exits, [{ signal: 'SIGKILL', killReason: 'the supervisor did not start' }]);
});
