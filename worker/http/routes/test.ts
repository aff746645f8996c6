import type { FastifyInstance } from 'fastify';

/** Set to 1 in the environment to get these routes; for the project's own tests, never in production. */
export const TEST_ROUTES_ENV = 'SYNCD_TEST_ROUTES';

/**
 * Routes that misbehave on purpose, so that process-level tests can prove what the supervisor does
 * with a slow request, a flood of log lines, a crash, a blocked event loop or an exhausted heap.
 * Registered under /rest/test.
 */
export async function testRoutes(app: FastifyInstance): Promise<void> {
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
