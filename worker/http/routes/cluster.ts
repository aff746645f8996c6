import type { FastifyInstance, FastifyPluginOptions, FastifyReply, FastifyRequest } from 'fastify';
import type { SyncService } from '../../service/open-service.ts';
import { notImplemented } from '../http-errors.ts';
import { checkedDeviceId } from './config.ts';
import { held } from './db.ts';

export interface ClusterRouteOptions extends FastifyPluginOptions {
  service: () => SyncService | undefined;
}

/** Syncthing's /rest/cluster endpoints: the devices that connected without being configured. */
export async function clusterRoutes(app: FastifyInstance, options: ClusterRouteOptions): Promise<void> {
  app.get('/rest/cluster/pending/devices', async () => {
    const pending: Record<string, { time: string; name: string; address: string }> = {};
    for (const { device, time, name, address } of held(options).connections.pendingDevices()) {
      pending[device] = { time, name, address };
    }
    return pending;
  });

  // Dismisses a pending device; it is listed again when it connects again, as in Syncthing.
  app.delete('/rest/cluster/pending/devices', async (request: FastifyRequest, reply: FastifyReply) => {
    const { device } = request.query as { device?: string };
    const id = checkedDeviceId(device ?? '');
    held(options).connections.dismissPending(id);
    return reply.code(200).send();
  });

  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/rest/cluster/pending/folders',
      handler: async () => {
        throw notImplemented(method, '/rest/cluster/pending/folders');
      },
    });
  }
}
