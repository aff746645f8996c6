import type { FastifyInstance, FastifyPluginOptions, FastifyReply, FastifyRequest } from 'fastify';
import type { SyncModel } from '../../service/model.ts';
import { invalidQuery } from '../http-errors.ts';
import { checkedDeviceId } from './config.ts';
import { heldModel } from './held-model.ts';

export interface ClusterRouteOptions extends FastifyPluginOptions {
  model: () => SyncModel | undefined;
}

/** Syncthing's /rest/cluster endpoints: the devices that connected without being configured. */
export async function clusterRoutes(app: FastifyInstance, options: ClusterRouteOptions): Promise<void> {
  app.get('/rest/cluster/pending/devices', async () => {
    const pending: Record<string, { time: string; name: string; address: string }> = {};
    for (const { device, time, name, address } of heldModel(options).pendingDevices()) {
      pending[device] = { time, name, address };
    }
    return pending;
  });

  // Dismisses a pending device; it is listed again when it connects again, as in Syncthing.
  app.delete('/rest/cluster/pending/devices', async (request: FastifyRequest, reply: FastifyReply) => {
    const { device } = request.query as { device?: string };
    const id = checkedDeviceId(device ?? '');
    heldModel(options).dismissPendingDevice(id);
    return reply.code(200).send();
  });

  // Folders devices offer that are not shared with them here, by folder; ?device= for one device's.
  app.get('/rest/cluster/pending/folders', async (request: FastifyRequest) => {
    const { device } = request.query as { device?: string };
    const of = device === undefined || device === '' ? undefined : checkedDeviceId(device);
    return heldModel(options).pendingFolders(of);
  });

  // Dismisses a folder offered by one device (?device=), or by every device; offered again by the
  // device's next ClusterConfig, as in Syncthing.
  app.delete('/rest/cluster/pending/folders', async (request: FastifyRequest, reply: FastifyReply) => {
    const { folder, device } = request.query as { folder?: string; device?: string };
    if (folder === undefined || folder === '') throw invalidQuery('give ?folder=ID, the folder to dismiss');
    const of = device === undefined || device === '' ? undefined : checkedDeviceId(device);
    heldModel(options).dismissPendingFolder(folder, of);
    return reply.code(200).send();
  });
}
