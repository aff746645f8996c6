import type { FastifyInstance, FastifyPluginOptions, FastifyRequest } from 'fastify';
import type { WorkerConfig } from '../../config/worker-config.ts';
import type { SyncModel, Version } from '../../service/model.ts';
import { HttpError, invalidQuery, noSuch } from '../http-errors.ts';
import { heldModel } from './held-model.ts';

export interface VersionRouteOptions extends FastifyPluginOptions {
  config: WorkerConfig;
  model: () => SyncModel | undefined;
}

// Files restored in one request, at most.
const MAX_RESTORED = 10_000;

/**
 * Syncthing's GET and POST /rest/folder/versions (lib/api/api.go): the versions the folder's
 * versioning keeps, by file, and their restore. Where Syncthing answers 500 with a line of text, the
 * answer is the JSON error shape with a 4xx naming the problem, in Syncthing's words.
 */
export async function versionRoutes(app: FastifyInstance, options: VersionRouteOptions): Promise<void> {
  // Syncthing reads the body as JSON whatever its type says.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  // The folder asked for: 404 when it is not configured, 409 when paused, 503 while no worker holds it.
  const folderOf = (request: FastifyRequest) => {
    const id = (request.query as { folder?: string }).folder ?? '';
    const folder = options.config.current.folders.find((candidate) => candidate.id === id);
    if (!folder)
      throw noSuch(id === '' ? 'no such folder: give ?folder=ID' : `no such folder: ${JSON.stringify(id)}`);
    if (folder.paused) throw new HttpError('SYNCD_ERR_FOLDER_PAUSED', `folder ${id} is paused`);
    return { id, model: heldModel(options) };
  };

  app.get('/rest/folder/versions', async (request) => {
    const { id, model } = folderOf(request);
    const versions = await model.versions(id);
    const answer: Record<string, Array<{ versionTime: string; modTime: string; size: number }>> = {};
    for (const [name, list] of Object.entries(versions)) answer[name] = list.map(shown);
    return answer;
  });

  app.post('/rest/folder/versions', async (request) => {
    const { id, model } = folderOf(request);
    // The body is read once the folder is known to keep versions, as Syncthing does.
    return model.restoreVersions(id, () => restoreRequest(request.body));
  });
}

// The body of a restore: {"NAME": "RFC 3339 time", …}, each name a relative path in the folder.
function restoreRequest(body: unknown): Array<[string, Date]> {
  let value: unknown;
  try {
    value = JSON.parse(String(body ?? ''));
  } catch (error) {
    throw invalidQuery(
      `the body must be JSON such as {"a.txt": "2022-03-01T14:30:05+01:00"}: ${(error as Error).message}`,
    );
  }
  if (value === null) return [];
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalidQuery('the body must be an object of file names and the version times to restore');
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_RESTORED)
    throw invalidQuery(`at most ${MAX_RESTORED} files may be restored at once`);
  return entries.map(([name, time]) => {
    const when = typeof time === 'string' ? new Date(time) : new Date(NaN);
    if (Number.isNaN(when.getTime())) {
      throw invalidQuery(`${JSON.stringify(name)}: ${JSON.stringify(time)} is not an RFC 3339 time`);
    }
    if (name === '' || name.startsWith('/') || name.split('/').some((part) => part === '..' || part === '')) {
      throw invalidQuery(`${JSON.stringify(name)} is not a file's name in the folder`);
    }
    return [name, when];
  });
}

function shown(version: Version) {
  return { versionTime: rfc3339(version.versionTime), modTime: rfc3339(version.modTime), size: version.size };
}

/** A time as Go's time.Time marshals one in local time: whole seconds, with the zone's offset. */
export function rfc3339(date: Date): string {
  const pad = (n: number) => String(Math.abs(n)).padStart(2, '0');
  const offset = -date.getTimezoneOffset();
  const zone =
    offset === 0 ? 'Z' : `${offset > 0 ? '+' : '-'}${pad(Math.trunc(offset / 60))}:${pad(offset % 60)}`;
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}${zone}`
  );
}
