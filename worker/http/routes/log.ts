import type { FastifyInstance, FastifyPluginOptions, FastifyRequest } from 'fastify';
import { type LogBuffer, parseSince } from '../../../shared/log-buffer.ts';
import {
  type DebugFacilities,
  FACILITIES,
  FACILITY_LEVELS,
  type FacilityLevel,
} from '../../../shared/debug-facilities.ts';
import { invalidBody, invalidQuery } from '../http-errors.ts';

export interface LogRouteOptions extends FastifyPluginOptions {
  buffer: LogBuffer;
  facilities: DebugFacilities;
}

/**
 * The worker's log and its debug switches, as Syncthing's GUI and clients read them (lib/api/api.go:
 * getSystemLog, getSystemLogTxt, getSystemDebug, postSystemDebug; 2.x getLogLevels, postLogLevels);
 * registered under /rest/system.
 */
export async function logRoutes(app: FastifyInstance, options: LogRouteOptions): Promise<void> {
  const { buffer, facilities } = options;
  // A body of any type, or none (the switches are in the query): kept as text, read as JSON only by
  // loglevels, as in Syncthing.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_request, body, done) =>
    done(null, body),
  );

  // The GUI's log viewer asks for the lines after the last it shows; Syncthing answers null for none.
  app.get('/log', async (request) => {
    const lines = buffer.since(sinceOf(request));
    return { messages: lines.length > 0 ? lines : null };
  });
  app.get('/log.txt', async (request, reply) => {
    reply.type('text/plain; charset=utf-8');
    return (
      buffer
        .since(sinceOf(request))
        // Syncthing's RFC 3339 in whole seconds.
        .map((line) => `${line.when.slice(0, 19)}Z: ${line.message}\n`)
        .join('')
    );
  });

  app.get('/debug', async () => ({ enabled: facilities.enabled(), facilities: FACILITIES }));
  // Syncthing answers 200 with no body, and accepts names it does not know.
  app.post('/debug', async (request, reply) => {
    const query = request.query as { enable?: unknown; disable?: unknown };
    facilities.set(namesOf(query.enable), namesOf(query.disable));
    reply.type('text/plain; charset=utf-8');
    return '';
  });

  // Syncthing 2.x's levels per package, our facilities standing for its packages.
  app.get('/loglevels', async () => ({
    levels: Object.fromEntries(
      Object.keys(FACILITIES).map((name) => [name, facilities.level(name as never)]),
    ),
    packages: FACILITIES,
  }));
  app.post('/loglevels', async (request, reply) => {
    facilities.setLevels(levelsOf(request.body));
    reply.type('text/plain; charset=utf-8');
    return '';
  });
}

function sinceOf(request: FastifyRequest): { ms: number; seq: number } | undefined {
  const given = (request.query as { since?: unknown }).since;
  if (typeof given !== 'string' || given === '') return undefined;
  const since = parseSince(given);
  // Syncthing ignores a `since` it cannot read; a client's mistake is better named.
  if (!since)
    throw invalidQuery(`since must be an RFC 3339 time such as 2026-11-27T06:30:00Z, not "${given}"`);
  return since;
}

function namesOf(value: unknown): string[] {
  const text = Array.isArray(value) ? value.join(',') : typeof value === 'string' ? value : '';
  return text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}

/** A levels body is a few names: more is a mistake. */
const BODY_LIMIT = 64 * 1024;

function levelsOf(text: unknown): Map<string, FacilityLevel> {
  let body: unknown;
  try {
    body = JSON.parse(typeof text === 'string' ? text : '');
  } catch {
    body = undefined;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidBody(
      'the body must be a JSON object of facility names to levels, such as {"model": "DEBUG"}',
    );
  }
  const levels = new Map<string, FacilityLevel>();
  for (const [name, level] of Object.entries(body)) {
    const upper = typeof level === 'string' ? level.toUpperCase() : '';
    if (!(FACILITY_LEVELS as readonly string[]).includes(upper)) {
      throw invalidBody(
        `${name}: the level must be one of ${FACILITY_LEVELS.join(', ')}, not ${JSON.stringify(level)}`,
      );
    }
    levels.set(name, upper as FacilityLevel);
  }
  return levels;
}
