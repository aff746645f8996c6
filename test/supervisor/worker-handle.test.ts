import t from 'tap';
import { describeExit } from '../../supervisor/worker-handle.ts';

t.test('an exit is described with its code or signal and the last stderr line', async (t) => {
  t.equal(
    describeExit(7, { code: 1, signal: null, lastStderrLine: 'oops' }),
    'worker 7 exited with code 1; its last stderr line: oops',
  );
  t.equal(
    describeExit(7, { code: null, signal: 'SIGKILL', lastStderrLine: undefined }),
    'worker 7 was killed by SIGKILL',
  );
  t.match(
    describeExit(7, { code: null, signal: null, lastStderrLine: undefined, error: new Error('ENOENT') }),
    /could not be started \(ENOENT\)/,
  );
});
