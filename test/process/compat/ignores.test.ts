// A folder whose .stignore on syncd hides paths that Syncthing has, changes and deletes: syncd never
// touches them, and both sides count the folder complete (Syncthing's rules: folder_sendrecv.go
// processNeeded, deleteDirOnDisk). Every file on both sides is checked by its SHA-256.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileTree, sha } from '../../helpers/file-tree.ts';
import t from 'tap';
import { startDevice } from '../../helpers/service.ts';
import {
  hasSyncthing,
  NO_SYNCTHING,
  pollUntil,
  shareFolder,
  startSyncthing,
} from '../../helpers/syncthing.ts';

const skip = hasSyncthing ? false : NO_SYNCTHING;

/** Every file under `root` (but the marker and .stignore) with the SHA-256 of its content. */
const tree = (root: string) => fileTree(root, (name) => name.startsWith('.stfolder') || name === '.stignore');

t.test(
  'syncd never creates, changes or deletes what it ignores, and both sides reach 100 %',
  { skip },
  async (t) => {
    const dir = t.testdir({
      theirs: {
        'a.txt': 'shared\n',
        'mine.log': 'Syncthing’s log\n',
        private: { 'their.txt': 'Syncthing’s, in a path syncd ignores\n' },
        later: { 'x.txt': 'ignored on syncd until its .stignore changes\n' },
      },
      ours: {
        '.stignore': '*.log\n/private\n/later\n',
        'mine.log': 'syncd’s own log\n',
        private: { 'secret.txt': 'syncd’s own, ignored\n' },
      },
    });
    const [theirs, mine] = [join(dir, 'theirs'), join(dir, 'ours')];
    await mkdir(join(theirs, '.stfolder'));
    const syncthing = await startSyncthing(t);
    const device = await startDevice(t);
    await shareFolder({ syncthing, device, folder: 'ign', theirs, mine });

    // Both sides settled: syncd needs nothing, and Syncthing counts syncd complete.
    const settled = async (what: string) => {
      await pollUntil(
        `${what}: syncd needs nothing`,
        async () => {
          const status = (await device.call('GET', '/rest/db/status?folder=ign')) as Record<string, unknown>;
          return status.state === 'idle' && status.needTotalItems === 0 && status.pullErrors === 0;
        },
        60_000,
      );
      await syncthing.until(
        `${what}: Syncthing counts syncd complete`,
        async () => {
          const answer = await syncthing.call<{ completion: number; needItems: number }>(
            'GET',
            `/rest/db/completion?folder=ign&device=${device.id}`,
          );
          return answer.completion === 100 && answer.needItems === 0;
        },
        60_000,
      );
    };
    await pollUntil('a.txt on syncd', () => readFile(join(mine, 'a.txt'), 'utf8'), 60_000);
    await settled('first exchange');
    // syncd's own ignored files, as they were all along.
    const ignoredHere = {
      'mine.log': sha('syncd’s own log\n'),
      'private/secret.txt': sha('syncd’s own, ignored\n'),
    };
    t.same(
      await tree(mine),
      { 'a.txt': sha('shared\n'), ...ignoredHere },
      'syncd: nothing made in an ignored path, its ignored file as it was',
    );
    t.same(
      await tree(theirs),
      {
        'a.txt': sha('shared\n'),
        'mine.log': sha('Syncthing’s log\n'),
        'private/their.txt': sha('Syncthing’s, in a path syncd ignores\n'),
        'later/x.txt': sha('ignored on syncd until its .stignore changes\n'),
      },
      'Syncthing: nothing of syncd’s ignored files',
    );

    // On Syncthing: the ignored file changed, the ignored directory deleted, a new file as a witness.
    await writeFile(join(theirs, 'mine.log'), 'Syncthing’s log, longer now\n');
    await rm(join(theirs, 'private'), { recursive: true });
    await writeFile(join(theirs, 'b.txt'), 'the witness\n');
    await syncthing.call('POST', '/rest/db/scan?folder=ign');
    await pollUntil('b.txt on syncd', () => readFile(join(mine, 'b.txt'), 'utf8'), 60_000);
    await settled('after the changes on Syncthing');
    t.same(
      await tree(mine),
      { 'a.txt': sha('shared\n'), 'b.txt': sha('the witness\n'), ...ignoredHere },
      'syncd: its ignored file unchanged, its ignored directory kept',
    );

    // A change of .stignore: what it no longer ignores is needed, and pulled.
    await device.call('POST', '/rest/db/ignores?folder=ign', { ignore: ['*.log', '/private'] });
    await pollUntil('later/x.txt on syncd', () => readFile(join(mine, 'later', 'x.txt'), 'utf8'), 60_000);
    await settled('after .stignore changed');
    t.equal(
      (await tree(mine))['later/x.txt'],
      sha('ignored on syncd until its .stignore changes\n'),
      'the path no longer ignored is pulled',
    );
    t.same(
      await tree(theirs),
      {
        'a.txt': sha('shared\n'),
        'b.txt': sha('the witness\n'),
        'mine.log': sha('Syncthing’s log, longer now\n'),
        'later/x.txt': sha('ignored on syncd until its .stignore changes\n'),
      },
      'Syncthing: unchanged by any of it',
    );
  },
);
