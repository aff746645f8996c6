// What a scan tells as LocalChangeDetected (the web GUI's Recent changes): not what the first scan of a
// folder's index finds, which was there before syncd knew it, but every change after it, in process
// with a real index and folder.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { FOLDER_DEFAULTS } from '../../../shared/config/defaults.ts';
import { EventLog } from '../../../worker/events/event-log.ts';
import { FolderRunner } from '../../../worker/folders/folder-runner.ts';
import { silentLogger } from '../../helpers/app.ts';
import { testDeviceId } from '../../helpers/config.ts';
import { indexedFolder } from '../../helpers/indexed-folder.ts';

async function scanned(tree: Record<string, string>, t: Test) {
  const { path, db, hasher } = await indexedFolder(t, { tree, shortId: 7n });
  const events = new EventLog();
  const runner = new FolderRunner(
    { ...FOLDER_DEFAULTS, id: 'f', path, rescanIntervalS: 0, fsWatcherEnabled: false },
    {
      db,
      hasher,
      events,
      shortId: 7n,
      myId: testDeviceId,
      logger: silentLogger(),
      connected: () => new Set(),
    },
  );
  t.teardown(() => runner.stop());
  await runner.scan();
  const disk = events.subscription(EventLog.diskTypes);
  const paths = async () => (await disk.since(0, 0)).map((event) => (event.data as { path: string }).path);
  return { path, runner, paths };
}

t.test('the first scan tells nothing of what was there; the next tells what changed', async (t) => {
  const { path, runner, paths } = await scanned({ 'old.txt': 'there before' }, t);
  t.same(await paths(), [], 'the folder as syncd found it');
  await writeFile(join(path, 'new.txt'), 'new');
  await runner.scan();
  t.same(await paths(), ['new.txt']);
});

t.test('a folder empty at its first scan: its first file is a change', async (t) => {
  const { path, runner, paths } = await scanned({}, t);
  await writeFile(join(path, 'first.txt'), 'first');
  await runner.scan();
  t.same(await paths(), ['first.txt'], 'told, though the index was empty until now');
});
