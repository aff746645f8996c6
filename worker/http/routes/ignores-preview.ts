import type { FastifyInstance, FastifyPluginOptions } from 'fastify';
import type { WorkerConfig } from '../../config/worker-config.ts';
import type { SyncModel } from '../../service/model.ts';
import { noSuch } from '../http-errors.ts';
import { ignoreLines } from './db.ts';
import { heldModel } from './held-model.ts';

export interface IgnoresPreviewRouteOptions extends FastifyPluginOptions {
  config: WorkerConfig;
  model: () => SyncModel | undefined;
}

/**
 * syncd's own POST /rest/syncd/ignores/preview (Syncthing has none): what ignore lines would leave out
 * of a folder, before they are saved, for the web GUI's ignore editor. The body is that of POST
 * /rest/db/ignores; unknown folders are 404 and lines that do not parse 400, as there.
 */
export async function ignoresPreviewRoutes(
  app: FastifyInstance,
  options: IgnoresPreviewRouteOptions,
): Promise<void> {
  // As /rest/db: the body is read as JSON whatever its type says.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  app.post('/rest/syncd/ignores/preview', async (request) => {
    const { folder } = request.query as { folder?: string | string[] };
    const id = (Array.isArray(folder) ? folder[0] : folder) ?? '';
    if (!options.config.current.folders.some((candidate) => candidate.id === id)) {
      throw noSuch(id === '' ? 'no such folder: give ?folder=ID' : `no such folder: ${JSON.stringify(id)}`);
    }
    // The body is read once the folder is known to run.
    return heldModel(options).ignoresPreview(id, () => ignoreLines(request.body));
  });
}
