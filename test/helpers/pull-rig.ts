import { join } from 'node:path';
import type { Test } from 'tap';
import { IndexDb } from '../../worker/index-db/index-db.ts';
import { HasherPool } from '../../worker/scanner/hasher-pool.ts';
import { BlockWriter } from '../../worker/sync/block-writer.ts';

/**
 * What a puller's test needs in `dir`: the index of a source device (source.sqlite), the index of the
 * device that pulls (target.sqlite), a hasher and a block writer; all closed when the test ends.
 */
export async function pullRig(t: Test, dir: string) {
  const sourceDb = await IndexDb.open(join(dir, 'source.sqlite'));
  const db = await IndexDb.open(join(dir, 'target.sqlite'));
  const hasher = new HasherPool(1);
  const writer = new BlockWriter();
  t.teardown(async () => {
    await hasher.close();
    await writer.close();
    sourceDb.close();
    db.close();
  });
  return { sourceDb, db, hasher, writer };
}
