import type { FastifyInstance, FastifyPluginOptions } from 'fastify';
import type { WorkerConfig } from '../../config/worker-config.ts';
import type { SyncModel } from '../../service/model.ts';
import { noSuch } from '../http-errors.ts';
import { heldModel } from './held-model.ts';

export interface ConflictRouteOptions extends FastifyPluginOptions {
  config: WorkerConfig;
  model: () => SyncModel | undefined;
}

/** Conflict copies listed in one answer, at most: a folder may hold any number of them. */
export const MAX_CONFLICT_COPIES = 1000;

/**
 * syncd's own GET /rest/syncd/conflicts: a folder's conflict copies (Syncthing's
 * NAME.sync-conflict-YYYYMMDD-HHMMSS-DEVICE.EXT) by the file each is a copy of, from the index, for
 * the GUI's Conflicts dialog. Syncthing has no such endpoint: its GUI would read the whole tree
 * (/rest/db/browse?levels=-1), which for a large folder is seconds of the worker and megabytes of JSON
 * for a few names; here the index is sifted for the marker and the answer stops at
 * MAX_CONFLICT_COPIES copies (`truncated` then).
 */
export async function conflictRoutes(app: FastifyInstance, options: ConflictRouteOptions): Promise<void> {
  app.get('/rest/syncd/conflicts', async (request) => {
    const asked = (request.query as { folder?: string | string[] }).folder;
    const id = (Array.isArray(asked) ? asked[0] : asked) ?? '';
    if (!options.config.current.folders.some((folder) => folder.id === id)) {
      throw noSuch(id === '' ? 'no such folder: give ?folder=ID' : `no such folder: ${JSON.stringify(id)}`);
    }
    return heldModel(options).conflicts(id, MAX_CONFLICT_COPIES);
  });
}
