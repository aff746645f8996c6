import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { makeDirectories, makeDirectoriesSync } from '../../shared/make-directories.ts';

const both = [
  ['makeDirectories', makeDirectories],
  ['makeDirectoriesSync', async (path: string, mode?: number) => makeDirectoriesSync(path, mode)],
] as const;

for (const [name, make] of both) {
  t.test(`${name}: the missing parents are made, an existing directory is no error`, async (t) => {
    const dir = t.testdir({ file: 'x' });
    await make(join(dir, 'a', 'b', 'c'), 0o700);
    t.equal((await stat(join(dir, 'a', 'b', 'c'))).mode & 0o777, 0o700, 'with the mode asked for');
    t.equal((await stat(join(dir, 'a'))).mode & 0o777, 0o700, 'its parents too');
    await make(join(dir, 'a', 'b', 'c'));
    await make(dir);
    await t.rejects(make(join(dir, 'file')), { code: 'EEXIST' }, 'a file where the directory would be');
    await t.rejects(make(join(dir, 'file', 'below')), { code: 'ENOTDIR' }, 'a file among its parents');
  });

  t.test(
    `${name}: a path under /proc, where mkdir answers ENOENT below an existing parent, fails at once`,
    { skip: process.platform === 'linux' ? false : '/proc is Linux’s' },
    async (t) => {
      // Node's recursive mkdir spins on these forever.
      await t.rejects(make('/proc/syncd-test/x'), { code: 'ENOENT', message: /mkdir '\/proc\/syncd-test'/ });
      await t.rejects(make('/proc/self/syncd-test'), { code: 'ENOENT' });
    },
  );
}

t.test('a directory made by someone else meanwhile is as good', async (t) => {
  const dir = t.testdir({});
  const target = join(dir, 'a', 'b');
  await Promise.all([makeDirectories(target), makeDirectories(target), makeDirectories(join(target, 'c'))]);
  t.ok((await stat(join(target, 'c'))).isDirectory());
});
