import type { FastifyInstance, FastifyPluginOptions } from 'fastify';
import type { Metrics, MetricSources } from '../metrics.ts';

export type MetricsRouteOptions = FastifyPluginOptions & MetricSources;

/**
 * Syncthing 2.x's GET /metrics (lib/api/api.go), in Prometheus' text format, behind the same key or
 * GUI login as the REST API. The metrics (prom-client, and the process's own watchers) start with the
 * first scrape: a worker nobody scrapes pays nothing for them.
 */
export async function metricsRoutes(app: FastifyInstance, options: MetricsRouteOptions): Promise<void> {
  let made: Promise<Metrics> | undefined;
  app.get('/metrics', async (_request, reply) => {
    made ??= import('../metrics.ts').then(({ metrics }) => metrics(options));
    const exposed = await made;
    const text = await exposed.text();
    reply.type(exposed.contentType);
    return text;
  });
}
