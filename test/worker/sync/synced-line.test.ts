// The line a pull logs for each item it finished, as Syncthing 2.x logs them at info.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { createLogger } from '../../../shared/logger.ts';
import { pullPair } from '../../helpers/pull-rig.ts';

t.test('a pull logs one info line per item finished: folder, name, type, action, size', async (t) => {
  const { paths, announce, scanHere, pull } = await pullPair(
    t,
    { 'a.txt': 'hello', d: { 'b.txt': 'bb' }, link: t.fixture('symlink', 'a.txt') },
    {},
  );
  const records: Array<Record<string, unknown>> = [];
  const logTo = (level: 'info' | 'warn') =>
    createLogger('worker', level, undefined, {
      write: (line: string) => void records.push(JSON.parse(line)),
    });
  // Each line as [item, type, action, size, message], by name; every one at info, of folder f.
  const lines = () => {
    const taken = records.splice(0).sort((a, b) => String(a.item).localeCompare(String(b.item)));
    t.ok(
      taken.every((line) => line.level === 30 && line.folder === 'f'),
      'at info, naming the folder',
    );
    return taken.map(({ item, type, action, size, msg }) => [item, type, action, size, msg]);
  };

  await announce();
  t.same((await pull(logTo('info'))).problems, []);
  t.same(lines(), [
    ['a.txt', 'file', 'update', 5, 'Synced file a.txt in folder f'],
    ['d', 'dir', 'update', undefined, 'Created or updated directory d in folder f'],
    ['d/b.txt', 'file', 'update', 2, 'Synced file d/b.txt in folder f'],
    ['link', 'symlink', 'update', undefined, 'Created or updated symlink link in folder f'],
  ]);

  await scanHere();
  await rm(join(paths.source, 'd'), { recursive: true });
  await rm(join(paths.source, 'link'));
  await announce();
  t.same((await pull(logTo('info'))).problems, []);
  t.same(lines(), [
    ['d', 'dir', 'delete', undefined, 'Deleted directory d in folder f'],
    ['d/b.txt', 'file', 'delete', undefined, 'Deleted file d/b.txt in folder f'],
    ['link', 'symlink', 'delete', undefined, 'Deleted symlink link in folder f'],
  ]);

  // Quieter than info, none.
  await rm(join(paths.source, 'a.txt'));
  await announce();
  t.equal((await pull(logTo('warn'))).pulled, 1);
  t.same(records, [], 'no line at warn');
});
