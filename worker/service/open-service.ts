import { join } from 'node:path';
import type { Logger } from '../../shared/logger.ts';
import type { WorkerConfig } from '../config/worker-config.ts';
import type { EventLog } from '../events/event-log.ts';
import { Folders } from '../folders/folders.ts';
import { INDEX_FILE, IndexDb, IndexDbError } from '../index-db/index-db.ts';
import { HasherPool } from '../scanner/hasher-pool.ts';
import { clearReset, pendingReset } from './reset-request.ts';
import type { Held } from './service.ts';

/** The service as a worker holds it: the index, the hashing threads and the folders. */
export interface SyncService extends Held {
  /** Undefined when the index cannot be used: `indexError` says why, and every folder is in error. */
  db: IndexDb | undefined;
  indexError: string | undefined;
  folders: Folders | undefined;
}

export interface ServiceContext {
  home: string;
  config: WorkerConfig;
  events: EventLog;
  shortId: bigint;
  logger: Logger;
}

/**
 * Opens the index in the home and starts every folder. An index file that cannot be used (not SQLite,
 * another program's, a newer schema, corrupt) is reported and left as it is: the folders then show the
 * error and nothing is scanned, so nothing is lost.
 */
export async function openService(context: ServiceContext): Promise<SyncService> {
  let db: IndexDb | undefined;
  let indexError: string | undefined;
  try {
    db = await IndexDb.open(join(context.home, INDEX_FILE));
  } catch (error) {
    if (!(error instanceof IndexDbError)) throw error;
    indexError = `the index cannot be used: ${error.message}`;
    context.logger.error({ slot: 'index-db' }, indexError);
  }
  if (db) await carryOutReset(db, context);
  const hasher = new HasherPool();
  // Started with the service when there are folders to scan: their first scan does not wait for
  // threads to start. Without work they end again (see hasher-pool.ts).
  if (db && context.config.current.folders.length > 0) hasher.warm();
  const folders = db ? new Folders({ ...context, db, hasher }) : undefined;
  folders?.start();
  return {
    db,
    indexError,
    folders,
    close: async () => {
      await folders?.stop();
      await hasher.close();
      db?.close();
    },
  };
}

// A reset asked for before the restart that brought this worker: the index is erased (new index IDs
// follow), then the folders are scanned anew.
async function carryOutReset(db: IndexDb, context: ServiceContext): Promise<void> {
  const reset = await pendingReset(context.home);
  if (!reset) return;
  const folders = reset.all ? db.folderIds() : reset.folders;
  for (const folder of folders) db.drop(folder);
  await clearReset(context.home);
  context.logger.info(
    { folders },
    reset.all
      ? 'index reset: every folder is indexed anew'
      : `index reset: ${folders.join(', ')} indexed anew`,
  );
}
