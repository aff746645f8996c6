import t from 'tap';
import { LastLine } from '../../supervisor/last-line.ts';

t.test('the last informative line survives chunk boundaries and Node version lines', async (t) => {
  const last = new LastLine();
  t.equal(last.value, undefined);
  last.push('Error: bo');
  t.equal(last.value, 'Error: bo', 'an unterminated line counts');
  last.push('om\n    at x\nworker crashed: uncaught Error: boom\n\nNode.js v20.20.2\n');
  t.equal(last.value, 'worker crashed: uncaught Error: boom');
});

t.test('the line naming the error wins over the properties Node prints after it', async (t) => {
  const last = new LastLine();
  last.push(
    [
      'file:///app/dist/worker/main.js:3',
      "import { x } from 'gone';",
      '^',
      "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'gone' imported from /app/dist/worker/main.js",
      '    at packageResolve (node:internal/modules/esm/resolve:854:9)',
      '{',
      "  code: 'ERR_MODULE_NOT_FOUND'",
      '}',
      '',
      'Node.js v20.20.2',
      '',
    ].join('\n'),
  );
  t.equal(
    last.value,
    "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'gone' imported from /app/dist/worker/main.js",
  );
  const oom = new LastLine();
  oom.push(
    '<--- Last few GCs --->\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n 1: 0xb8f4 node::Abort() [node]\n',
  );
  t.match(oom.value, /^FATAL ERROR: Reached heap limit/);
});
