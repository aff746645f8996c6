import { Session } from 'node:inspector/promises';
import { getHeapSnapshot } from 'node:v8';
import type { FastifyInstance, FastifyPluginOptions, FastifyReply, FastifyRequest } from 'fastify';
import { parseDuration } from '../../../shared/duration.ts';
import { versionInfo } from '../../../shared/version.ts';
import type { WorkerConfig } from '../../config/worker-config.ts';
import { invalidQuery, notImplemented } from '../http-errors.ts';
import { whenDebugging } from '../when-debugging.ts';

export interface DebugRouteOptions extends FastifyPluginOptions {
  config: WorkerConfig;
}

/** Syncthing's default length of a CPU profile, and the longest syncd takes. */
const DEFAULT_PROFILE_MS = 30_000;
const MAX_PROFILE_MS = 10 * 60_000;

/**
 * Syncthing's profiles of the running service, as the worker's engine makes them: a CPU profile
 * (V8's .cpuprofile, for Chrome's DevTools, where Syncthing writes Go's pprof) and a heap snapshot
 * (.heapsnapshot). `syncthing cli debug profile cpu|heap` saves them.
 */
export async function debugRoutes(app: FastifyInstance, options: DebugRouteOptions): Promise<void> {
  app.addHook('onRequest', whenDebugging(options.config));

  app.get('/cpuprof', async (request, reply) => {
    const ms = profileLength(request);
    const session = new Session();
    session.connect();
    try {
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
      await new Promise((resolve) => setTimeout(resolve, ms));
      const { profile } = await session.post('Profiler.stop');
      attachment(reply, 'cpu', 'cpuprofile');
      return JSON.stringify(profile);
    } finally {
      session.disconnect();
    }
  });

  app.get('/heapprof', async (_request, reply) => {
    attachment(reply, 'heap', 'heapsnapshot');
    return reply.send(getHeapSnapshot());
  });

  // Syncthing zips its configuration, logs and reports; syncd has no such bundle yet.
  app.get('/support', async (request) => {
    throw notImplemented(request.method, '/rest/debug/support');
  });
  app.get('/httpmetrics', async (request) => {
    throw notImplemented(request.method, '/rest/debug/httpmetrics');
  });
}

function profileLength(request: FastifyRequest): number {
  const given = (request.query as { duration?: unknown }).duration;
  if (given === undefined || given === '') return DEFAULT_PROFILE_MS;
  const ms = typeof given === 'string' ? parseDuration(given) : undefined;
  if (ms === undefined || ms <= 0 || ms > MAX_PROFILE_MS) {
    throw invalidQuery(`duration must be a time such as 30s, at most 10m, not "${String(given)}"`);
  }
  return ms;
}

/** Syncthing's file names for profiles (syncthing-cpu-linux-amd64-v1.19.2-150405.pprof), with ours. */
function attachment(reply: FastifyReply, kind: string, extension: string): void {
  const { os, arch, version } = versionInfo();
  const time = new Date().toTimeString().slice(0, 8).replaceAll(':', '');
  reply.type('application/octet-stream');
  reply.header(
    'content-disposition',
    `attachment; filename=syncd-${kind}-${os}-${arch}-${version}-${time}.${extension}`,
  );
}
