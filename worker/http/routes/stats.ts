import type { FastifyInstance, FastifyPluginOptions } from 'fastify';
import type { WorkerConfig } from '../../config/worker-config.ts';
import type { SyncModel } from '../../service/model.ts';
import { heldModel } from './held-model.ts';

export interface StatsRouteOptions extends FastifyPluginOptions {
  config: WorkerConfig;
  model: () => SyncModel | undefined;
}

/** Syncthing's /rest/stats: when each device was last seen, and each folder's last scan and file. */
export async function statsRoutes(app: FastifyInstance, options: StatsRouteOptions): Promise<void> {
  app.get('/rest/stats/device', async () => heldModel(options).deviceStats());

  app.get('/rest/stats/folder', async () => {
    const ids = options.config.current.folders.map(({ id }) => id);
    return heldModel(options).folderStats(ids);
  });
}
