// Every test file runs once in `npm test`: tap runs those its `include` names, a process each, and
// the groups of helpers/in-process.ts the others. A file anywhere else would never run.
import { execa } from 'execa';
import t from 'tap';
import { packageRoot } from '../shared/paths.ts';
import { GROUPS, groupFiles, testFiles } from './helpers/in-process.ts';
import { outsideTap } from './helpers/teardown-first.ts';

t.test('each test file is run by tap itself or by exactly one group', async (t) => {
  // tap's own list of what it runs.
  const env = outsideTap();
  const { stdout } = await execa('tap', ['list'], {
    cwd: packageRoot,
    preferLocal: true,
    env,
    extendEnv: false,
  });
  const byTap = stdout
    .split('\n')
    .filter(Boolean)
    .map((file) => file.replace(/^test\//, ''));
  const grouped = (await Promise.all(Object.keys(GROUPS).map((group) => groupFiles(group)))).flat();
  const runners = (file: string) => file.startsWith('groups/');
  t.same(
    [...byTap.filter((file) => !runners(file)), ...grouped].sort(),
    (await testFiles()).filter((file) => !runners(file)),
    'every other file once',
  );
  t.same(
    byTap.filter((file) => file.startsWith('groups/')).sort(),
    Object.keys(GROUPS)
      .map((group) => `groups/${group}.test.ts`)
      .sort(),
    'a group file for each group',
  );
});
