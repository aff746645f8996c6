// `tsc --noEmit` as a test, so that tap runs it beside the others (it waits on nothing, they often wait
// on processes) instead of before them all.
import { execa } from 'execa';
import t from 'tap';
import { packageRoot } from '../../shared/paths.ts';

// The project's own installed tools (node_modules/.bin), run in its folder.
const local = { cwd: packageRoot, preferLocal: true, reject: false } as const;

t.test('the TypeScript compiler finds no error (tsc --noEmit)', async (t) => {
  const result = await execa('tsc', ['--noEmit'], local);
  t.equal(result.exitCode, 0, [result.stdout, result.stderr].join('\n').trim() || 'tsc failed');
});
