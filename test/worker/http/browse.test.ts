// GET /rest/system/browse, the path box of Syncthing's Add Folder dialog, in-process.
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { buildApp } from '../../../worker/http/app.ts';
import { appOptions, injector } from '../../helpers/app.ts';

t.test('directories that begin with what is typed, as Syncthing lists them', async (t) => {
  const dir = t.testdir({ Alpha: {}, alps: {}, beta: {}, 'alpha.txt': 'a file' });
  await symlink(join(dir, 'Alpha'), join(dir, 'alink'));
  await symlink(join(dir, 'nowhere'), join(dir, 'alost'));
  const app = buildApp(appOptions());
  t.teardown(() => app.close());
  const call = injector(app);
  const browse = async (current?: string) => {
    const query = current === undefined ? '' : `?current=${encodeURIComponent(current)}`;
    const response = await call('GET', `/rest/system/browse${query}`);
    t.equal(response.status, 200, `current=${current}`);
    return response.json();
  };
  t.same(
    await browse(join(dir, 'al')),
    [join(dir, 'alink/'), join(dir, 'alps/'), join(dir, 'Alpha/')],
    'those of the same case first, a link to a directory among them; no file, no broken link',
  );
  t.same(
    await browse(`${dir}/`),
    ['Alpha', 'alink', 'alps', 'beta'].map((name) => join(dir, `${name}/`)),
    'a trailing separator lists the directory',
  );
  t.same(await browse(join(dir, 'gamma')), [], 'no match: an empty list');
  t.same(await browse(join(dir, 'missing', '')), [], 'a directory that is not there: an empty list');
  t.same(await browse(''), ['/'], 'nothing typed: the root');
  t.same(await browse(), ['/']);
  await mkdir(join(dir, 'beta', 'inner'));
  await writeFile(join(dir, 'beta', 'file'), '');
  t.same(await browse(join(dir, 'beta/')), [join(dir, 'beta/inner/')]);
  t.same(await browse('~'), await browse(homedir()), '~ is the home directory');
  t.same(await browse('~/'), await browse(`${homedir()}/`));
});
