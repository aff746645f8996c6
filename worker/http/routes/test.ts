import type { FastifyInstance, FastifyPluginOptions } from 'fastify';
import type { Service } from '../../service/service.ts';

/** Set to 1 in the environment to get these routes; for the project's own tests, never in production. */
export const TEST_ROUTES_ENV = 'SYNCD_TEST_ROUTES';

/**
 * Routes that misbehave on purpose, so that process-level tests can prove what the supervisor does
 * with a slow request, a flood of log lines, a crash, a blocked event loop, an exhausted heap, or a
 * service that cannot be acquired or will not be released.
 * Registered under /rest/test.
 */
export interface TestRouteOptions {
  service?: Service;
}

export async function testRoutes(
  app: FastifyInstance,
  options: TestRouteOptions & FastifyPluginOptions,
): Promise<void> {
  // The service's next acquire fails or never ends (acquire=fail|hang), its next release never ends
  // (release=hang): a worker that cannot take the service, or will not let it go.
  app.post('/service', async (request) => {
    const query = request.query as { acquire?: string; release?: string };
    const never = () => new Promise<void>(() => {});
    if (!options.service) return { ok: 'no service here' };
    options.service.hooks = {
      beforeAcquire:
        query.acquire === 'fail'
          ? async () => {
              throw new Error('acquiring failed, as a test asked');
            }
          : query.acquire === 'hang'
            ? never
            : undefined,
      beforeRelease: query.release === 'hang' ? never : undefined,
    };
    return { ok: 'service hooks set' };
  });
  // Answers after `ms` milliseconds; with `chunks`, streams that many parts spread over the time.
  app.get('/slow', async (request, reply) => {
    const query = request.query as { ms?: string; chunks?: string };
    const ms = Math.min(Number(query.ms ?? 1000), 60_000);
    const chunks = Math.max(1, Math.min(Number(query.chunks ?? 1), 1000));
    reply.raw.writeHead(200, {
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'no-cache, no-store',
    });
    for (let i = 0; i < chunks; i++) {
      await new Promise((resolve) => setTimeout(resolve, ms / chunks));
      reply.raw.write(`part ${i + 1} of ${chunks}\n`);
    }
    reply.raw.end(`done after ${ms}ms\n`);
    return reply;
  });
  // Logs `lines` info lines of `bytes` bytes each: fills a log reader's pipe.
  app.post('/log', async (request) => {
    const query = request.query as { lines?: string; bytes?: string };
    const lines = Math.max(1, Math.min(Number(query.lines ?? 1), 100_000));
    const text = 'x'.repeat(Math.max(1, Math.min(Number(query.bytes ?? 100), 100_000)));
    for (let i = 0; i < lines; i++) request.log.info({ line: i }, text);
    return { ok: `logged ${lines} lines` };
  });
  app.post('/crash', async () => {
    setImmediate(() => {
      throw new Error('crash asked for by a test');
    });
    return { ok: 'crashing' };
  });
  app.post('/block', async () => {
    setImmediate(() => {
      for (;;) {
        // A blocked event loop: the supervisor's heartbeats go unanswered.
      }
    });
    return { ok: 'blocking' };
  });
  app.post('/oom', async () => {
    const hoard: unknown[] = [];
    setImmediate(function grow() {
      for (let i = 0; i < 10_000; i++) hoard.push({ i, text: `${i}`.repeat(20) });
      setImmediate(grow);
    });
    return { ok: 'exhausting the heap' };
  });
}
