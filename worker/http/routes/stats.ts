import type { FastifyInstance, FastifyPluginOptions } from 'fastify';
import type { WorkerConfig } from '../../config/worker-config.ts';
import type { SyncService } from '../../service/open-service.ts';
import { held } from './db.ts';

export interface StatsRouteOptions extends FastifyPluginOptions {
  config: WorkerConfig;
  service: () => SyncService | undefined;
}

/** Syncthing's /rest/stats: when each device was last seen, and each folder's last scan and file. */
export async function statsRoutes(app: FastifyInstance, options: StatsRouteOptions): Promise<void> {
  app.get('/rest/stats/device', async () => held(options).connections.deviceStats());

  app.get('/rest/stats/folder', async () => {
    const { folders } = held(options);
    const out: Record<string, unknown> = {};
    for (const { id } of options.config.current.folders) {
      const runner = folders?.get(id);
      if (runner) out[id] = runner.stats;
    }
    return out;
  });
}
