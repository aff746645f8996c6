import t from 'tap';
import { LastLine } from '../../supervisor/last-line.ts';
import { describeExit } from '../../supervisor/worker-process.ts';

t.test('the last informative line survives chunk boundaries and Node version lines', async (t) => {
  const last = new LastLine();
  t.equal(last.value, undefined);
  last.push('Error: bo');
  t.equal(last.value, 'Error: bo', 'an unterminated line counts');
  last.push('om\n    at x\nworker crashed: uncaught Error: boom\n\nNode.js v20.20.2\n');
  t.equal(last.value, 'worker crashed: uncaught Error: boom');
});

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
