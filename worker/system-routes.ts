import { homedir } from 'node:os';
import { sep } from 'node:path';
import type { FastifyInstance, FastifyPluginOptions, FastifyReply, FastifyRequest } from 'fastify';
import type { Action, SupervisorStats } from '../shared/protocol.ts';
import { emptyErrorText, notImplemented } from './errors.ts';
import type { RecentErrors } from './recent-errors.ts';

export interface StatusSource {
  startTime: Date;
  /** HOST:PORT the supervisor bound. */
  address: string;
  supervisor: () => SupervisorStats;
}

interface SystemRouteOptions extends FastifyPluginOptions {
  errors: RecentErrors;
  status: StatusSource;
  onAction: (action: Action) => void;
}

/** The /rest/system endpoints; registered under that prefix. */
export async function systemRoutes(app: FastifyInstance, options: SystemRouteOptions): Promise<void> {
  const { errors, status, onAction } = options;
  const pong = { ping: 'pong' };

  app.get('/ping', async () => pong);
  app.post('/ping', async () => pong);

  // The answer goes out in full before the supervisor hears of the action, and it closes its
  // connection so that the client's next request reaches whichever worker serves after it.
  const action = (name: Action, answer: string) => ({
    onResponse: async (_request: FastifyRequest, reply: FastifyReply) => {
      if (reply.statusCode === 200) onAction(name);
    },
    handler: async (_request: FastifyRequest, reply: FastifyReply) => {
      reply.header('connection', 'close');
      return { ok: answer };
    },
  });
  app.post('/restart', action('restart', 'restarting'));
  app.post('/shutdown', action('shutdown', 'shutting down'));

  app.get('/error', async () => ({ errors: errors.list() }));
  app.post('/error', async (request) => {
    const body = request.body as Buffer | undefined;
    const message = body?.toString('utf8').trim() ?? '';
    if (message === '') throw emptyErrorText();
    errors.add({ when: new Date().toISOString(), message, level: 50 });
    return { ok: 'recorded' };
  });
  app.post('/error/clear', async () => {
    errors.clear();
    return { ok: 'cleared' };
  });

  app.get('/status', async () => {
    const memory = process.memoryUsage();
    return {
      pid: process.pid,
      startTime: status.startTime.toISOString(),
      uptime: Math.floor((Date.now() - status.startTime.getTime()) / 1000),
      guiAddressUsed: status.address,
      memory: { rss: memory.rss, heapUsed: memory.heapUsed },
      supervisor: status.supervisor(),
      pathSeparator: sep,
      tilde: homedir(),
    };
  });

  // Operations of the interface that a later version gives real behaviour: say so, never fake it.
  for (const [method, path] of notBuiltYet) {
    app.route({
      method,
      url: path,
      handler: async () => {
        throw notImplemented(method, `/rest/system${path}`);
      },
    });
  }
}

const notBuiltYet = [
  ['POST', '/pause'],
  ['POST', '/resume'],
  ['POST', '/reset'],
  ['POST', '/discovery'],
  ['GET', '/discovery'],
] as const;
