import { existsSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { replaceBuild } from '../../../scripts/build/replace-build.ts';

t.test(
  'a rebuild never leaves a moment without the entry or its chunks, and clears what is stale',
  async (t) => {
    const dir = t.testdir();
    const build = (n: number) => [
      { path: join(dir, 'chunks', `chunk-${n}.js`), contents: Buffer.from(`chunk ${n}`) },
      { path: join(dir, 'worker', 'main.js'), contents: Buffer.from(`import './chunks/chunk-${n}.js'`) },
    ];
    await replaceBuild(dir, build(0));
    await mkdir(join(dir, 'types'));
    await writeFile(join(dir, 'types', 'kept.d.ts'), '');
    let missing = 0;
    let checks = 0;
    let building = true;
    const watch = (async () => {
      while (building) {
        checks += 1;
        if (!existsSync(join(dir, 'worker', 'main.js'))) missing += 1;
        // Whatever entry is there, the chunk it imports is there too.
        const entry = await readFile(join(dir, 'worker', 'main.js'), 'utf8').catch(() => '');
        const chunk = /chunks\/(chunk-\d+\.js)/.exec(entry)?.[1];
        if (chunk && !existsSync(join(dir, 'chunks', chunk))) missing += 1;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    for (let n = 1; n <= 30; n++) await replaceBuild(dir, build(n), { keep: ['types/'] });
    building = false;
    await watch;
    t.equal(missing, 0, `no file missing in ${checks} looks`);
    t.ok(existsSync(join(dir, 'chunks', 'chunk-29.js')), 'an old chunk stays for its grace');
    await replaceBuild(dir, build(31), { keep: ['types/'], graceMs: 0 });
    t.ok(existsSync(join(dir, 'chunks', 'chunk-31.js')));
    t.notOk(existsSync(join(dir, 'chunks', 'chunk-29.js')), 'then the old chunks are gone');
    t.ok(existsSync(join(dir, 'types', 'kept.d.ts')), 'what is kept is kept');
  },
);

t.test('a file that starts with #! is written executable', async (t) => {
  const dir = t.testdir();
  await replaceBuild(dir, [
    { path: join(dir, 'bin', 'cmd.js'), contents: Buffer.from('#!/usr/bin/env node\n') },
    { path: join(dir, 'lib.js'), contents: Buffer.from('export {}\n') },
  ]);
  t.equal((await stat(join(dir, 'bin', 'cmd.js'))).mode & 0o777, 0o755);
  t.equal((await stat(join(dir, 'lib.js'))).mode & 0o777, 0o644);
});
