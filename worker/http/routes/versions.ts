import type { FastifyInstance, FastifyPluginOptions, FastifyRequest } from 'fastify';
import type { WorkerConfig } from '../../config/worker-config.ts';
import type { SyncService } from '../../service/open-service.ts';
import type { FileVersion } from '../../versioning/versioner.ts';
import { HttpError, invalidQuery, noSuch } from '../http-errors.ts';
import { held } from './db.ts';

export interface VersionRouteOptions extends FastifyPluginOptions {
  config: WorkerConfig;
  service: () => SyncService | undefined;
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

  const versionerOf = (request: FastifyRequest) => {
    const id = (request.query as { folder?: string }).folder ?? '';
    const folder = options.config.current.folders.find((candidate) => candidate.id === id);
    if (!folder)
      throw noSuch(id === '' ? 'no such folder: give ?folder=ID' : `no such folder: ${JSON.stringify(id)}`);
    if (folder.paused) throw new HttpError('SYNCD_ERR_FOLDER_PAUSED', `folder ${id} is paused`);
    const service = held(options);
    const runner = service.folders?.get(id);
    if (!runner) {
      throw new HttpError(
        'SYNCD_ERR_FOLDER_ERROR',
        `folder ${id} is not running: ${service.indexError ?? 'it is starting'}`,
      );
    }
    const versioner = runner.versioner;
    if (!versioner) {
      throw new HttpError(
        'SYNCD_ERR_NO_VERSIONING',
        `folder ${id} has no versioner: set its versioning first`,
      );
    }
    return { runner, versioner };
  };

  app.get('/rest/folder/versions', async (request) => {
    const { versioner } = versionerOf(request);
    if (versioner.type === 'external') throw restoreUnsupported('get versions');
    const versions = await versioner.versions();
    const answer: Record<string, Array<{ versionTime: string; modTime: string; size: number }>> = {};
    for (const [name, list] of Object.entries(versions)) answer[name] = list.map(shown);
    return answer;
  });

  app.post('/rest/folder/versions', async (request) => {
    const { runner, versioner } = versionerOf(request);
    if (versioner.type === 'external') throw restoreUnsupported('restore');
    const wanted = restoreRequest(request.body);
    const failures: Record<string, string> = {};
    const restored: string[] = [];
    for (const [name, versionTime] of wanted) {
      try {
        await versioner.restore(name, versionTime);
        restored.push(name);
      } catch (error) {
        failures[name] = (error as Error).message;
      }
    }
    // What was restored is scanned, so that the other devices get it.
    if (restored.length > 0) void runner.scan(restored);
    return failures;
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

function restoreUnsupported(operation: string): HttpError {
  return new HttpError(
    'SYNCD_ERR_NO_VERSIONING',
    `external versioner: ${operation}: version restoration not supported with the current versioner`,
  );
}

function shown(version: FileVersion) {
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
