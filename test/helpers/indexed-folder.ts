import { join } from 'node:path';
import type { Test } from 'tap';
import { IndexDb } from '../../worker/index-db/index-db.ts';
import { HasherPool } from '../../worker/scanner/hasher-pool.ts';
import { scanFolder } from '../../worker/folders/scan-folder.ts';
import './teardown-first.ts';

/**
 * A folder `f` on disk (its marker and `tree`), an index and hashing threads of its own, all closed in
 * `t.teardown`; `scan` indexes it as the device `shortId`.
 */
export async function indexedFolder(
  t: Test,
  options: { tree?: Record<string, unknown>; threads?: number; shortId: bigint },
) {
  const dir = t.testdir({ folder: { '.stfolder': {}, ...options.tree } });
  const path = join(dir, 'folder');
  const db = await IndexDb.open(join(dir, 'index.sqlite'));
  const hasher = new HasherPool(options.threads ?? 1);
  t.teardown(async () => {
    await hasher.close();
    db.close();
  });
  const folder = { id: 'f', path, markerName: '.stfolder', ignorePerms: false, modTimeWindowS: 0 };
  const scan = (under?: string[]) => scanFolder({ folder, db, hasher, shortId: options.shortId, under });
  return { path, db, hasher, folder, scan };
}
