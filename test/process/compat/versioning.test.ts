// File versioning beside a real Syncthing with the same versioning: each keeps what the other's changes
// replace or delete, under the same names, listed in the same shape; a restore on syncd reaches
// Syncthing. Every file is checked by SHA-256.
import { chmod, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileTree, sha } from '../../helpers/file-tree.ts';
import t from 'tap';
import { call, startDevice } from '../../helpers/service.ts';
import {
  hasSyncthing,
  NO_SYNCTHING,
  pollUntil,
  shareFolder,
  startSyncthing,
} from '../../helpers/syncthing.ts';

const skip = hasSyncthing ? false : NO_SYNCTHING;

/** Every file under `root` (the marker left out), `.stversions` included, by SHA-256. */
const tree = (root: string) => fileTree(root, (name) => name.startsWith('.stfolder'));
const TAG = '\\d{8}-\\d{6}';

t.test(
  'simple versioning keeps what the other device replaced or deleted, as Syncthing does',
  { skip },
  async (t) => {
    const dir = t.testdir({
      theirs: { 'a.txt': 'a, first\n', 'b.txt': 'b, first\n', 'c.txt': 'c, first\n' },
      ours: {},
    });
    const [theirs, mine] = [join(dir, 'theirs'), join(dir, 'ours')];
    await mkdir(join(theirs, '.stfolder'));
    const syncthing = await startSyncthing(t);
    const device = await startDevice(t);
    await shareFolder({ syncthing, device, folder: 'v', theirs, mine });
    const versioning = { type: 'simple', params: { keep: '5', cleanoutDays: '0' } };
    await syncthing.call('PATCH', '/rest/config/folders/v', { versioning });
    await device.call('PATCH', '/rest/config/folders/v', { versioning });
    await pollUntil('c.txt on syncd', () => readFile(join(mine, 'c.txt'), 'utf8'), 60_000);

    // Syncthing changes a.txt and deletes b.txt; syncd changes c.txt.
    await writeFile(join(theirs, 'a.txt'), 'a, second\n');
    await rm(join(theirs, 'b.txt'));
    await syncthing.call('POST', '/rest/db/scan?folder=v');
    await writeFile(join(mine, 'c.txt'), 'c, second\n');
    await device.call('POST', '/rest/db/scan?folder=v');
    const versionsOf = async (root: string) =>
      (await readdir(join(root, '.stversions')).catch(() => [])).sort();
    const mineKept = await pollUntil(
      'a.txt and b.txt versioned on syncd',
      async () => {
        const kept = await versionsOf(mine);
        return kept.length === 2 && kept;
      },
      60_000,
    );
    const theirsKept = await pollUntil(
      'c.txt versioned on Syncthing',
      async () => {
        const kept = await versionsOf(theirs);
        return kept.length === 1 && kept;
      },
      60_000,
    );
    t.match(mineKept, [new RegExp(`^a~${TAG}\\.txt$`), new RegExp(`^b~${TAG}\\.txt$`)], 'syncd names them');
    t.match(theirsKept, [new RegExp(`^c~${TAG}\\.txt$`)], 'as Syncthing names its own');
    const kept = await tree(mine);
    t.equal(kept[`.stversions/${mineKept[0]}`], sha('a, first\n'), 'the replaced version kept');
    t.equal(kept[`.stversions/${mineKept[1]}`], sha('b, first\n'), 'the deleted one kept');

    // Listed in Syncthing's shape on both.
    type Listed = Record<string, Array<{ versionTime: string; modTime: string; size: number }>>;
    const ours = (await device.call('GET', '/rest/folder/versions?folder=v')) as Listed;
    const syncthings = await syncthing.call<Listed>('GET', '/rest/folder/versions?folder=v');
    t.same(Object.keys(ours).sort(), ['a.txt', 'b.txt']);
    t.same(Object.keys(syncthings), ['c.txt']);
    t.same(Object.keys(ours['b.txt']?.[0] ?? {}).sort(), Object.keys(syncthings['c.txt']?.[0] ?? {}).sort());
    t.match(ours['b.txt']?.[0], {
      size: 9,
      versionTime: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)$/,
    });

    // Restored on syncd: b.txt is back, and Syncthing gets it.
    const versionTime = ours['b.txt']?.[0]?.versionTime as string;
    t.same(
      await device.call('POST', '/rest/folder/versions?folder=v', { 'b.txt': versionTime }),
      {},
      'no failure',
    );
    await pollUntil('b.txt back on Syncthing', () => readFile(join(theirs, 'b.txt'), 'utf8'), 60_000);
    const files = (tree: Record<string, string>) =>
      Object.fromEntries(Object.entries(tree).filter(([name]) => !name.startsWith('.stversions/')));
    await pollUntil('both sides the same', async () => {
      const [a, b] = [files(await tree(mine)), files(await tree(theirs))];
      return JSON.stringify(a) === JSON.stringify(b);
    });
    t.same(
      files(await tree(mine)),
      { 'a.txt': sha('a, second\n'), 'b.txt': sha('b, first\n'), 'c.txt': sha('c, second\n') },
      'both hold the restored b.txt and the latest a.txt and c.txt',
    );

    // Mistakes are 4xx naming them, and change nothing.
    await device.call('POST', '/rest/config/folders', { id: 'plain', path: join(dir, 'plain') });
    const asked = async (method: string, path: string, body?: string) => {
      const reply = await call(device.syncd, method, path, body === undefined ? {} : { body });
      return [reply.status, (reply.body as { code?: string }).code];
    };
    t.same(await asked('GET', '/rest/folder/versions?folder=plain'), [409, 'SYNCD_ERR_NO_VERSIONING']);
    t.same(await asked('GET', '/rest/folder/versions?folder=nope'), [404, 'SYNCD_ERR_NOT_FOUND']);
    t.same(await asked('POST', '/rest/folder/versions?folder=v', '["b.txt"]'), [
      400,
      'SYNCD_ERR_INVALID_QUERY',
    ]);
    t.same(
      await asked('POST', '/rest/folder/versions?folder=v', '{"../x": "2026-01-01T00:00:00Z"}'),
      [400, 'SYNCD_ERR_INVALID_QUERY'],
      'a name outside the folder',
    );
    t.same(await asked('POST', '/rest/folder/versions?folder=v', '{"b.txt": "yesterday"}'), [
      400,
      'SYNCD_ERR_INVALID_QUERY',
    ]);
    const missing = (await device.call('POST', '/rest/folder/versions?folder=v', {
      'a.txt': '2001-01-01T00:00:00Z',
    })) as Record<string, string>;
    t.match(
      missing,
      { 'a.txt': /^simple versioner: restore: version not found$/ },
      'a version not kept: named',
    );
  },
);

t.test('trashcan and external versioning act on what Syncthing replaces or deletes', { skip }, async (t) => {
  const dir = t.testdir({
    theirs: { t: { 'x.txt': 'x, first\n', 'y.txt': 'y, first\n' }, e: { 'z.txt': 'z, first\n' } },
    ours: { t: {}, e: {} },
    kept: {},
    'keep.sh': '#!/bin/sh\nmv "$1/$2" "$3/"\n',
  });
  await chmod(join(dir, 'keep.sh'), 0o755);
  for (const sub of ['t', 'e']) await mkdir(join(dir, 'theirs', sub, '.stfolder'));
  const syncthing = await startSyncthing(t);
  const device = await startDevice(t);
  for (const id of ['t', 'e']) {
    await shareFolder({
      syncthing,
      device,
      folder: id,
      theirs: join(dir, 'theirs', id),
      mine: join(dir, 'ours', id),
    });
  }
  await device.call('PATCH', '/rest/config/folders/t', {
    versioning: { type: 'trashcan', params: { cleanoutDays: '0' } },
  });
  const command = `${join(dir, 'keep.sh')} %FOLDER_PATH% %FILE_PATH% ${join(dir, 'kept')}`;
  await device.call('PATCH', '/rest/config/folders/e', {
    versioning: { type: 'external', params: { command } },
  });
  const mine = (path: string) => join(dir, 'ours', path);
  await pollUntil(
    'y.txt and z.txt on syncd',
    async () => {
      await readFile(mine('t/y.txt'));
      return readFile(mine('e/z.txt'));
    },
    60_000,
  );

  await writeFile(join(dir, 'theirs', 't', 'x.txt'), 'x, second\n');
  await rm(join(dir, 'theirs', 't', 'y.txt'));
  await writeFile(join(dir, 'theirs', 'e', 'z.txt'), 'z, second\n');
  await syncthing.call('POST', '/rest/db/scan?folder=t');
  await syncthing.call('POST', '/rest/db/scan?folder=e');
  await pollUntil(
    'the changes on syncd',
    async () =>
      (await readFile(mine('t/x.txt'), 'utf8')) === 'x, second\n' &&
      (await readFile(mine('e/z.txt'), 'utf8')) === 'z, second\n' &&
      (await readdir(mine('t'))).every((name) => name !== 'y.txt'),
    60_000,
  );
  t.same(
    await tree(mine('t/.stversions')),
    { 'x.txt': sha('x, first\n'), 'y.txt': sha('y, first\n') },
    'trashcan: the last version of each, untagged',
  );
  t.same(await tree(join(dir, 'kept')), { 'z.txt': sha('z, first\n') }, 'external: the command moved it');
  t.same(Object.keys((await device.call('GET', '/rest/folder/versions?folder=t')) as object).sort(), [
    'x.txt',
    'y.txt',
  ]);
  const external = await call(device.syncd, 'GET', '/rest/folder/versions?folder=e');
  t.match([external.status, external.body], [409, { message: /version restoration not supported/ }]);
});
