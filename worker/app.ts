import Fastify, { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { hostAllowed } from '../shared/hosts.ts';
import type { Logger } from '../shared/logger.ts';
import type { Action } from '../shared/protocol.ts';
import { apiKeyChecker } from './auth.ts';
import { AuthFailures } from './auth-failures.ts';
import {
  type ErrorBody,
  errorBody,
  HttpError,
  hostNotAllowed,
  methodNotAllowed,
  notFound,
  tooManyFailures,
  unauthorized,
} from './errors.ts';
import type { RecentErrors } from './recent-errors.ts';
import { type StatusSource, systemRoutes } from './system-routes.ts';
import { testRoutes } from './test-routes.ts';

/** The largest request body accepted (the error text posted to /rest/system/error included). */
export const BODY_LIMIT = 64 * 1024;
const RAW_BODY_TYPE = 'application/octet-stream';

export interface AppOptions {
  apiKey: string;
  logger: Logger;
  errors: RecentErrors;
  status: StatusSource;
  /** Called once the response asking for the action has been sent in full. */
  onAction: (action: Action) => void;
  /** True once the worker is stopping: responses then close their connection. */
  isDraining: () => boolean;
  /** Adds the misbehaving /rest/test routes (SYNCD_TEST_ROUTES=1); for tests only. */
  testRoutes?: boolean;
  /** Host header values accepted (null: any); see shared/hosts.ts. */
  allowedHosts?: string[] | null;
  /** Failed keys per client; a fresh counter when not given. */
  authFailures?: AuthFailures;
  /** Bounds on slow clients; Node's defaults when not given. */
  limits?: { headersTimeoutMs: number; requestTimeoutMs: number };
  /** Serve HTTPS on the connections handed over, with this certificate and key. */
  tls?: { cert: string; key: string } | null;
}

// Header limits: Node's own 16 KiB in all, and at most 100 header lines.
const MAX_HEADER_BYTES = 16 * 1024;
const MAX_HEADER_COUNT = 100;

/** The HTTP application, apart from any socket: tests drive it with `inject()`. */
export function buildApp(options: AppOptions) {
  const app = Fastify({
    loggerInstance: options.logger,
    // One log line per request halves throughput; failures are logged where they are handled.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    // A stopping worker still answers the requests it holds; the supervisor sends it no new ones.
    return503OnClosing: false,
    forceCloseConnections: false,
    // The HTTP server itself, so that slow clients are bounded: time for the headers and the whole
    // request, checked every second (Node's default check runs every 30 s), and the size of headers.
    // With TLS, the same server speaks HTTPS: the handshake happens on the connection handed over.
    serverFactory: (handler) => {
      const serverOptions = {
        headersTimeout: options.limits?.headersTimeoutMs,
        requestTimeout: options.limits?.requestTimeoutMs,
        connectionsCheckingInterval: 1000,
        maxHeaderSize: MAX_HEADER_BYTES,
      };
      const server = options.tls
        ? createHttpsServer({ ...serverOptions, cert: options.tls.cert, key: options.tls.key }, handler)
        : createServer(serverOptions, handler);
      server.maxHeadersCount = MAX_HEADER_COUNT;
      return server;
    },
  });

  // Action endpoints take a body of any type, or none, and never answer 415: keep every body raw.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  const routesByPath = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const methods = routesByPath.get(route.url) ?? new Set<string>();
    for (const method of [route.method].flat()) methods.add(method);
    routesByPath.set(route.url, methods);
  });

  const keyMatches = apiKeyChecker(options.apiKey);
  const allowedHosts = options.allowedHosts ?? null;
  const failures = options.authFailures ?? new AuthFailures();
  // A callback hook, not an async one: this runs on every request and a promise each costs throughput.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('cache-control', 'no-cache, no-store');
    // Bodies are kept raw whatever they claim to be, so a malformed type must not turn into a 415.
    if (request.headers['content-type'] !== undefined) request.headers['content-type'] = RAW_BODY_TYPE;
    if (options.isDraining()) reply.header('connection', 'close');
    // Before the key is even looked at: a page whose name was rebound to this address is refused.
    if (!hostAllowed(request.headers.host, allowedHosts)) {
      done(hostNotAllowed(request.headers.host ?? ''));
      return;
    }
    // Every path needs the key but the noauth ones, unknown paths included, so that no spelling of a
    // path (double slashes, dot segments) can reach an action without it.
    if (request.routeOptions.url?.startsWith('/rest/noauth/') || keyMatches(request.headers)) {
      done();
      return;
    }
    const client = request.socket.remoteAddress ?? 'unknown';
    const wait = failures.retryAfter(client);
    if (wait > 0) {
      done(tooManyFailures(wait));
      return;
    }
    if (failures.record(client)) {
      request.log.warn(
        { client },
        `a request from ${client} had a missing or wrong API key (further ones from it this minute are not logged)`,
      );
    }
    done(unauthorized());
  });

  app.setNotFoundHandler(async (request) => {
    const path = request.url.split('?', 1)[0] as string;
    const allowed = routesByPath.get(path);
    if (allowed) throw methodNotAllowed(request.method, path, [...allowed].sort());
    throw notFound(request.method, path);
  });

  app.setErrorHandler(async (error: Error & { statusCode?: number }, request, reply) =>
    replyWithError(error, request, reply),
  );

  app.get('/rest/noauth/health', async () => ({ status: 'OK' }));
  app.register(systemRoutes, { ...options, prefix: '/rest/system' });
  if (options.testRoutes) app.register(testRoutes, { prefix: '/rest/test' });
  return app;
}

function replyWithError(
  error: Error & { statusCode?: number },
  request: FastifyRequest,
  reply: FastifyReply,
): ErrorBody {
  const statusCode = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
  if (error instanceof HttpError) reply.headers(error.headers);
  reply.code(statusCode);
  if (statusCode >= 500 && !(error instanceof HttpError)) {
    request.log.error({ err: error, method: request.method, url: request.url }, 'request failed');
    return errorBody(500, 'internal error; the worker log has the details');
  }
  return errorBody(statusCode, error.message);
}
export type App = ReturnType<typeof buildApp>;
