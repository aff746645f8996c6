// helpers/untracked-children.mjs against the tap installed: a Node process a test starts loads no
// loader of tap's (each would double the CPU of every supervisor and worker the tests start).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';

t.test("a process a test starts carries none of tap's loaders", async (t) => {
  const { stdout } = await promisify(execFile)(process.execPath, [
    '-p',
    'JSON.stringify([process.env.NODE_OPTIONS ?? "", process.execArgv])',
  ]);
  t.notMatch(stdout, /@tapjs/, stdout.trim());
});
