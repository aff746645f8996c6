import Fastify, { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Socket } from 'node:net';
import type { Logger } from '../../shared/logger.ts';
import type { Action } from '../../shared/ipc/protocol.ts';
import { type Access, admission, noKeyNeeded } from './admission.ts';
import { AuthFailures } from './auth-failures.ts';
import { GuiAuth } from './gui-auth.ts';
import { AllowedMethods } from './allowed-methods.ts';
import { ConnectionRequests } from './closing.ts';
import { replyWithError } from './error-reply.ts';
import { HttpError, methodNotAllowed, notFound, tooManyFailures, unauthorized } from './http-errors.ts';
import { fastPing, httpServerFactory } from './server.ts';
import { answerClientError } from './client-errors.ts';
import { type ErrorList, type StatusSource, systemRoutes } from './routes/system.ts';
import { type TestRouteOptions, testRoutes } from './routes/test.ts';
import { configRoutes } from './routes/config.ts';
import { eventRoutes } from './routes/events.ts';
import { dbRoutes } from './routes/db.ts';
import { versionRoutes } from './routes/versions.ts';
import { clusterRoutes } from './routes/cluster.ts';
import { statsRoutes } from './routes/stats.ts';
import { svcRoutes } from './routes/svc.ts';
import { awaitModel } from './routes/held-model.ts';
import { type LogRouteOptions, logRoutes } from './routes/log.ts';
import { reportRoutes } from './routes/report.ts';
import { guiLoginRoutes } from './routes/gui-login.ts';
import { ownGuiRoutes } from './routes/own-gui.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { EventTally } from './event-tally.ts';
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
  /** Configuration fields a flag decides (the status tells them, for the GUI to say so). */
  overrides?: Record<string, boolean>;
  /** The key the web GUI's CSRF tokens and sessions are made under (see gui-auth.ts); none: no GUI login. */
  guiSecret?: Buffer | string;
  /** A folder of web GUI files served at /: dist/gui (syncd's own), or that of --gui-assets. */
  guiAssets?: string;
  /** guiAssets is syncd's own GUI: its files load before the login, which is a form on its page. */
  ownGui?: boolean;
  /** The files the service keeps, for GET /rest/system/paths. */
  paths?: Record<string, string>;
  /** The log buffer behind /rest/system/log and the debug switches. */
  log?: LogRouteOptions;
  /** The event log behind /rest/events. */
  events?: EventLog;
  /** The model of the service (index, folders, devices) while this worker holds it, behind /rest/db. */
  model?: () => SyncModel | undefined;
  /** Resolves true once this worker holds the service (false after `ms`): requests wait for it. */
  whenHeld?: (ms: number) => Promise<boolean>;
  /** Records a reset of the index for the next worker (POST /rest/system/reset). */
  reset?: (folder: string | undefined) => Promise<void>;
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
  const admit = admission(access, options.onProven);
  // On every response, as Syncthing sends them.
  const everyResponse = {
    'cache-control': 'no-cache, no-store',
    ...(options.deviceId ? { 'x-syncthing-id': options.deviceId } : {}),
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
    // The HTTP server itself (see server.ts): slow clients bounded, TLS, ping answered before Fastify.
    serverFactory: httpServerFactory({
      limits: options.limits,
      tls: options.tls,
      fastPing: fastPing({ admit, isDraining: options.isDraining, headers: everyResponse }),
    }),
  });

  const allowedMethods = new AllowedMethods();
  app.addHook('onRoute', (route) => allowedMethods.add(route.method, route.url));

  const failures = options.authFailures ?? new AuthFailures();
  // The GUI's way in exists while a GUI is served only: without pages, the key alone lets in.
  const gui =
    options.deviceId && options.guiSecret && options.guiAssets !== undefined
      ? new GuiAuth({
          deviceId: options.deviceId,
          secret: options.guiSecret,
          credentials: () => options.config?.current.gui ?? { user: '', password: '' },
          failures,
          secure: !!options.tls,
          loginForm: options.ownGui ?? false,
        })
      : undefined;
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
    // path (double slashes, dot segments) can reach an action without it; or the GUI's credentials.
    if (noKeyNeeded(request)) {
      done();
      return;
    }
    if (!gui) {
      done(refused(request));
      return;
    }
    gui.admit(request).then(
      (admitted) => {
        if (admitted === undefined || admitted instanceof HttpError) {
          done(admitted ?? refused(request));
          return;
        }
        if (admitted.cookies.length > 0) reply.header('set-cookie', admitted.cookies);
        if (admitted.proven) options.onProven?.(request.socket);
        done();
      },
      (error: Error) => done(error),
    );
  });
  /** A request without the key or the GUI's credentials: 401, counted, or 429 past the limit. */
  const refused = (request: FastifyRequest): HttpError => {
    const client = request.socket.remoteAddress ?? 'unknown';
    const wait = failures.retryAfter(client);
    if (wait > 0) return tooManyFailures(wait);
    const report = failures.record(client);
    if (report.log) {
      // One slot in the recent errors: requests anyone can send must not push the real errors out.
      request.log.warn(
        { client, slot: 'auth-failures' },
        `a request from ${client} had a missing or wrong API key${report.since > 0 ? ` (and ${report.since} more since the last such line)` : ''}; further ones this minute are counted, not logged`,
      );
    }
    return unauthorized();
  };

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
  const modelWait =
    options.model && options.whenHeld
      ? awaitModel({ model: options.model, whenHeld: options.whenHeld, isDraining: options.isDraining })
      : undefined;
  app.register(systemRoutes, {
    ...options,
    modelWait,
    prefix: '/rest/system',
    closeAfterAnswering: (request: FastifyRequest) => connections.closeAfterAnswering(request),
  });
  if (options.config) {
    app.register(configRoutes, {
      config: options.config,
      requiresRestart: options.requiresRestart ?? (() => false),
    });
  }
  app.register(svcRoutes, { prefix: '/rest/svc' });
  if (options.log) app.register(logRoutes, { ...options.log, prefix: '/rest/system' });
  if (options.events) app.register(eventRoutes, { events: options.events });
  const { config, model } = options;
  if (config && model) {
    // Routes that answer from the model wait a moment for it while a restart hands it over.
    app.register(async (scope) => {
      if (modelWait) scope.addHook('preHandler', modelWait);
      scope.register(dbRoutes, { config, model });
      scope.register(versionRoutes, { config, model });
      scope.register(clusterRoutes, { model });
      scope.register(statsRoutes, { config, model });
    });
    app.register(reportRoutes, {
      config,
      model,
      startTime: options.status.startTime,
      prefix: '/rest/svc',
    });
  }
  if (gui) app.register(guiLoginRoutes, { gui });
  // Counted from the start, whether or not anything scrapes: scans and pulls are known from events only.
  const tally = options.events ? new EventTally(options.events) : undefined;
  if (tally) app.addHook('onClose', async () => tally.stop());
  app.register(metricsRoutes, { config, model, status: options.status, tally });
  if (config) {
    // Loaded when first asked for: the profilers cost every start else.
    app.register(
      async (scope) => {
        const { debugRoutes } = await import('./routes/debug.ts');
        await scope.register(debugRoutes, { config });
      },
      { prefix: '/rest/debug' },
    );
  }
  if (options.guiAssets !== undefined && options.deviceId) {
    const pages = {
      root: options.guiAssets,
      deviceId: options.deviceId,
      gui: () => config?.current.gui ?? { theme: 'default', insecureAllowFrameLoading: false },
      auth: gui,
    };
    if (options.ownGui) app.register(ownGuiRoutes, pages);
    else {
      // Loaded only when a folder is served: the file server costs every start else.
      app.register(async (scope) => {
        const { guiAssetRoutes } = await import('./routes/gui-assets.ts');
        await scope.register(guiAssetRoutes, pages);
      });
    }
  }
  if (options.testRoutes) app.register(testRoutes, { ...options.testRoutes, prefix: '/rest/test' });
  return app;
}

function cutIfUnread(reply: FastifyReply): void {
  const timer = setTimeout(() => reply.raw.socket?.destroy(), WRITE_TIMEOUT_MS);
  reply.raw.once('close', () => clearTimeout(timer));
}

export type App = ReturnType<typeof buildApp>;
