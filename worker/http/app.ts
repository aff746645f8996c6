import Fastify, { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { createServer, type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { hostAllowed } from '../../shared/hosts.ts';
import type { Logger } from '../../shared/logger.ts';
import type { Action } from '../../shared/ipc/protocol.ts';
import { apiKeyChecker } from './auth.ts';
import { AuthFailures } from './auth-failures.ts';
import { AllowedMethods } from './allowed-methods.ts';
import {
  asHttpError,
  codeOf,
  type ErrorBody,
  errorBody,
  HttpError,
  headersTooLarge,
  hostNotAllowed,
  methodNotAllowed,
  notFound,
  tooManyFailures,
  unauthorized,
} from './http-errors.ts';
import { answerClientError } from './client-errors.ts';
import { MAX_HEADER_BYTES, MAX_HEADER_COUNT } from './limits.ts';
import { type ErrorList, JSON_TYPE, PING_BODY, type StatusSource, systemRoutes } from './routes/system.ts';
import { type TestRouteOptions, testRoutes } from './routes/test.ts';
import { configRoutes } from './routes/config.ts';
import { eventRoutes } from './routes/events.ts';
import { dbRoutes } from './routes/db.ts';
import { versionRoutes } from './routes/versions.ts';
import { clusterRoutes } from './routes/cluster.ts';
import { statsRoutes } from './routes/stats.ts';
import type { SyncModel } from '../service/model.ts';
import type { WorkerConfig } from '../config/worker-config.ts';
import type { EventLog } from '../events/event-log.ts';

/** The largest request body accepted by routes that set no limit of their own (/rest/system: 64 KiB). */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

export interface AppOptions {
  apiKey: string;
  /** This device's ID: in every response's X-Syncthing-Id, as Syncthing sends it, and in the status. */
  deviceId?: string;
  logger: Logger;
  errors: ErrorList;
  status: StatusSource;
  /** Called once the response asking for the action has been sent in full. */
  onAction: (action: Action) => void;
  /** True once the worker is stopping: responses then close their connection. */
  isDraining: () => boolean;
  /** A connection sent a request with the API key (see ConnectionPool.prove). */
  onProven?: (socket: Socket) => void;
  /** Adds the misbehaving /rest/test routes (SYNCD_TEST_ROUTES=1), acting on this service; for tests only. */
  testRoutes?: TestRouteOptions;
  /** Host header values accepted (null: any); see shared/hosts.ts. */
  allowedHosts?: string[] | null;
  /** Failed keys per client; a fresh counter when not given. */
  authFailures?: AuthFailures;
  /** Bounds on slow clients; Node's defaults when not given. */
  limits?: { headersTimeoutMs: number; requestTimeoutMs: number };
  /** Serve HTTPS on the connections handed over, with this certificate and key. */
  tls?: { cert: string; key: string } | null;
  /**
   * The key and hosts checked on each request, when they can change while serving (a saved
   * configuration): `apiKey` and `allowedHosts` above are the starting values otherwise.
   */
  access?: Access;
  /** The configuration, for its endpoints and pause/resume. */
  config?: WorkerConfig;
  requiresRestart?: () => boolean;
  guiAddressOverridden?: boolean;
  /** The event log behind /rest/events. */
  events?: EventLog;
  /** The model of the service (index, folders, devices) while this worker holds it, behind /rest/db. */
  model?: () => SyncModel | undefined;
  /** Records a reset of the index for the next worker (POST /rest/system/reset). */
  reset?: (folder: string | undefined) => Promise<void>;
}

export interface Access {
  apiKey: string;
  allowedHosts: string[] | null;
}

// A response this large may not fit the connection's buffers: one whose reader does not take it within
// the time below is cut, so that clients that never read cannot pile up answers in memory.
const LARGE_RESPONSE_BYTES = 64 * 1024;
const WRITE_TIMEOUT_MS = 30_000;

function noSchemas(): never {
  throw new Error('syncd routes declare no JSON schemas: check the input in the handler instead');
}

/** The HTTP application, apart from any socket: tests drive it with `inject()`. */
export function buildApp(options: AppOptions) {
  const access: Access = options.access ?? {
    apiKey: options.apiKey,
    allowedHosts: options.allowedHosts ?? null,
  };
  let checkedKey = access.apiKey;
  let keyMatches = apiKeyChecker(checkedKey);
  /**
   * The checks every request passes first, in this order: the size of its headers, its Host, its key.
   * True: the key is right (the connection is proven); false: no key or a wrong one (whether it needs
   * one depends on the route); an error: refused whatever the route.
   */
  const admit = (raw: IncomingMessage): HttpError | boolean => {
    const rawHeaders = raw.rawHeaders;
    if (rawHeaders.length > 2 * MAX_HEADER_COUNT || headerBytes(rawHeaders) > MAX_HEADER_BYTES) {
      return headersTooLarge(rawHeaders.length / 2);
    }
    // Before the key is even looked at: a page whose name was rebound to this address is refused.
    if (!hostAllowed(raw.headers.host, access.allowedHosts)) return hostNotAllowed(raw.headers.host ?? '');
    if (access.apiKey !== checkedKey) {
      checkedKey = access.apiKey;
      keyMatches = apiKeyChecker(checkedKey);
    }
    if (!keyMatches(raw.headers)) return false;
    options.onProven?.(raw.socket);
    return true;
  };
  // On every response, as Syncthing sends them.
  const everyResponse = {
    'cache-control': 'no-cache, no-store',
    ...(options.deviceId ? { 'x-syncthing-id': options.deviceId } : {}),
  };
  const pingHeaders = {
    ...everyResponse,
    'content-type': JSON_TYPE,
    'content-length': String(Buffer.byteLength(PING_BODY)),
  };
  /**
   * GET /rest/system/ping, what health checks and monitors send most, answered before Fastify when it
   * passes every check (admit) and nothing else is special about it: Fastify's routing and its request
   * and reply objects cost more than the answer. Anything else (a body, a wrong key, a connection that
   * must close, a draining worker) goes to Fastify, which answers it the usual way.
   */
  const answeredFast = (raw: IncomingMessage, res: ServerResponse): boolean => {
    if (raw.method !== 'GET' || raw.url !== '/rest/system/ping') return false;
    if (raw.headers['content-length'] !== undefined || raw.headers['transfer-encoding'] !== undefined) {
      return false;
    }
    // A response still queued behind an earlier one (pipelining) has no socket yet: the earlier ones
    // decide whether the connection closes, which Fastify's count of them keeps (ConnectionRequests).
    const socket = raw.socket as Tracked;
    if (!res.socket || options.isDraining() || socket[closing] || socket[unanswered]) return false;
    if (admit(raw) !== true) return false;
    res.writeHead(200, pingHeaders);
    res.end(PING_BODY);
    return true;
  };

  const app = Fastify({
    loggerInstance: options.logger,
    // One log line per request halves throughput; failures are logged where they are handled.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: DEFAULT_BODY_LIMIT,
    // A stopping worker still answers the requests it holds; the supervisor sends it no new ones.
    return503OnClosing: false,
    forceCloseConnections: false,
    clientErrorHandler: answerClientError,
    // No route declares a JSON schema (each checks its input itself, in Syncthing's terms): Fastify's
    // schema compilers (Ajv, fast-json-stringify) would cost the worker's start without serving.
    schemaController: { compilersFactory: { buildValidator: noSchemas, buildSerializer: noSchemas } },
    // The HTTP server itself, so that slow clients are bounded: time for the headers and the whole
    // request, checked every second (Node's default check runs every 30 s), time for a TLS handshake,
    // and the size of headers. With TLS, the same server speaks HTTPS on the connection handed over.
    serverFactory: (handler) => {
      const serverOptions = {
        headersTimeout: options.limits?.headersTimeoutMs,
        requestTimeout: options.limits?.requestTimeoutMs,
        connectionsCheckingInterval: 1000,
        maxHeaderSize: MAX_HEADER_BYTES,
      };
      const serve = (raw: IncomingMessage, res: ServerResponse) => {
        if (!answeredFast(raw, res)) handler(raw, res);
      };
      const server = options.tls
        ? createHttpsServer(
            {
              ...serverOptions,
              cert: options.tls.cert,
              key: options.tls.key,
              // A connection that never starts its handshake is bounded like one that never sends headers.
              handshakeTimeout: options.limits?.headersTimeoutMs ?? 10_000,
            },
            serve,
          )
        : createServer(serverOptions, serve);
      server.maxHeadersCount = 0;
      return server;
    },
  });

  const allowedMethods = new AllowedMethods();
  app.addHook('onRoute', (route) => allowedMethods.add(route.method, route.url));

  const failures = options.authFailures ?? new AuthFailures();
  const connections = new ConnectionRequests();
  // A callback hook, not an async one: this runs on every request and a promise each costs throughput.
  app.addHook('onRequest', (request, reply, done) => {
    connections.started(request);
    reply.headers(everyResponse);
    const admitted = admit(request.raw);
    if (admitted instanceof HttpError) {
      done(admitted);
      return;
    }
    if (admitted) {
      done();
      return;
    }
    // Every path needs the key but the noauth ones, unknown paths included, so that no spelling of a
    // path (double slashes, dot segments) can reach an action without it.
    if (noKeyNeeded(request)) {
      done();
      return;
    }
    const client = request.socket.remoteAddress ?? 'unknown';
    const wait = failures.retryAfter(client);
    if (wait > 0) {
      done(tooManyFailures(wait));
      return;
    }
    const report = failures.record(client);
    if (report.log) {
      // One slot in the recent errors: requests anyone can send must not push the real errors out.
      request.log.warn(
        { client, slot: 'auth-failures' },
        `a request from ${client} had a missing or wrong API key${report.since > 0 ? ` (and ${report.since} more since the last such line)` : ''}; further ones this minute are counted, not logged`,
      );
    }
    done(unauthorized());
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    connections.beforeAnswer(request, reply, options.isDraining());
    if (Buffer.isBuffer(payload) && payload.length > LARGE_RESPONSE_BYTES) cutIfUnread(reply);
    done();
  });

  app.setNotFoundHandler(async (request) => {
    const path = request.url.split('?', 1)[0] as string;
    const allowed = allowedMethods.of(path);
    if (allowed.length > 0) throw methodNotAllowed(request.method, path, allowed);
    throw notFound(request.method, path);
  });

  app.setErrorHandler(async (error: Error & { statusCode?: number }, request, reply) =>
    replyWithError(error, request, reply),
  );

  app.get('/rest/noauth/health', async () => ({ status: 'OK' }));
  app.register(systemRoutes, {
    ...options,
    prefix: '/rest/system',
    closeAfterAnswering: (request: FastifyRequest) => connections.closeAfterAnswering(request),
  });
  if (options.config) {
    app.register(configRoutes, {
      config: options.config,
      requiresRestart: options.requiresRestart ?? (() => false),
    });
  }
  if (options.events) app.register(eventRoutes, { events: options.events });
  if (options.config && options.model) {
    app.register(dbRoutes, { config: options.config, model: options.model });
    app.register(versionRoutes, { config: options.config, model: options.model });
    app.register(clusterRoutes, { model: options.model });
    app.register(statsRoutes, { config: options.config, model: options.model });
  }
  if (options.testRoutes) app.register(testRoutes, { ...options.testRoutes, prefix: '/rest/test' });
  return app;
}

/**
 * Which connections must close, and when. A response with `Connection: close` ends its connection, and
 * Node drops the requests the client had already pipelined behind it, unanswered. So a connection that
 * should close (the worker drains, a restart was asked for on it) closes with the answer to the last
 * request read on it, and reads nothing more from then on. Kept on the socket itself: this runs for
 * every request, and a property costs less than a map or a listener.
 */
class ConnectionRequests {
  started(request: FastifyRequest): void {
    const socket = request.raw.socket as Tracked;
    socket[unanswered] = (socket[unanswered] ?? 0) + 1;
  }

  closeAfterAnswering(request: FastifyRequest): void {
    (request.raw.socket as Tracked)[closing] = true;
  }

  /** Called as a response begins: the last one known on a closing connection closes it. */
  beforeAnswer(request: FastifyRequest, reply: FastifyReply, draining: boolean): void {
    const socket = request.raw.socket as Tracked;
    const left = (socket[unanswered] ?? 1) - 1;
    socket[unanswered] = left;
    if (draining) socket[closing] = true;
    if (!socket[closing] || left > 0) return;
    reply.header('connection', 'close');
    // inject()'s stand-in socket cannot pause.
    if (typeof socket.pause === 'function') socket.pause();
  }
}

const unanswered = Symbol('requests read and not yet answered');
const closing = Symbol('close once they are');
type Tracked = Socket & { [unanswered]?: number; [closing]?: boolean };

function noKeyNeeded(request: FastifyRequest): boolean {
  const route = request.routeOptions.url;
  if (route !== undefined) return route.startsWith('/rest/noauth/');
  // An unknown path under /rest/noauth/ gets its 404 without a key, spelled plainly only.
  const path = request.url.split('?', 1)[0] as string;
  return path.startsWith('/rest/noauth/') && !/\/\/|\/\.\.?(\/|$)/.test(path);
}

function headerBytes(rawHeaders: string[]): number {
  // Each line is NAME: VALUE and a line break.
  let bytes = 0;
  for (const part of rawHeaders) bytes += part.length + 2;
  return bytes;
}

function cutIfUnread(reply: FastifyReply): void {
  const timer = setTimeout(() => reply.raw.socket?.destroy(), WRITE_TIMEOUT_MS);
  reply.raw.once('close', () => clearTimeout(timer));
}

function replyWithError(
  thrown: Error & { statusCode?: number },
  request: FastifyRequest,
  reply: FastifyReply,
): ErrorBody {
  // A configuration a request made that cannot be used or saved says so (see routes/config.ts).
  const error = asHttpError(thrown) as Error & { statusCode?: number };
  if (error instanceof HttpError) {
    reply.headers(error.headers);
    reply.code(error.statusCode);
    return errorBody(error.code, error.message);
  }
  // Fastify's own refusals (a body too large, a malformed JSON body) keep their status and message.
  const statusCode = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
  if (statusCode >= 500) {
    request.log.error({ err: error, method: request.method, url: request.url }, 'request failed');
    reply.code(500);
    return errorBody('SYNCD_ERR_INTERNAL', 'internal error; the worker log has the details');
  }
  const answer = errorBody(codeOf(statusCode), error.message);
  reply.code(statusCode);
  return { ...answer, statusCode, error: STATUS_CODES[statusCode] ?? answer.error };
}
export type App = ReturnType<typeof buildApp>;
