import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { INPUTS_FILE, isBuildCurrent, recordBuildInputs } from '../../../scripts/build/inputs.ts';

t.test(
  'a build is current until a source it was made from, the lock file or an output changes',
  async (t) => {
    const root = t.testdir({
      'package.json': '{}',
      'package-lock.json': '{}',
      'worker.ts': 'export const a = 1;',
      dist: { 'main.js': 'built' },
    });
    const record = () =>
      recordBuildInputs(root, ['worker.ts', 'node_modules/fastify/index.js'], ['dist/main.js']);
    t.notOk(await isBuildCurrent(root), 'never recorded');
    await record();
    t.ok(await isBuildCurrent(root), 'recorded, nothing changed');

    await writeFile(join(root, 'worker.ts'), 'export const a = 2;');
    t.notOk(await isBuildCurrent(root), 'a bundled source changed');
    await record();
    t.ok(await isBuildCurrent(root));

    await writeFile(join(root, 'package-lock.json'), '{"lockfileVersion":3}');
    t.notOk(await isBuildCurrent(root), 'the dependencies changed');
    await record();

    await writeFile(join(root, 'tsconfig.json'), '{}');
    t.notOk(await isBuildCurrent(root), 'a settings file appeared');
    await record();

    await rm(join(root, 'worker.ts'));
    t.notOk(await isBuildCurrent(root), 'a source is gone');
    await writeFile(join(root, 'worker.ts'), 'export const a = 2;');
    t.ok(await isBuildCurrent(root), 'back as it was');

    await rm(join(root, 'dist', 'main.js'));
    t.notOk(await isBuildCurrent(root), 'an output is missing');
    await mkdir(join(root, 'dist'), { recursive: true });
    await writeFile(join(root, 'dist', 'main.js'), 'built');

    await writeFile(join(root, INPUTS_FILE), '{ not json');
    t.notOk(await isBuildCurrent(root), 'a damaged record');
  },
);
