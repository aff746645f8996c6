import type { Socket } from 'node:net';
import { createLogger, logDestination, reportDroppedLines, standardOutput } from '../shared/logger.ts';
import {
  type Action,
  type Dispatch,
  type DrainReason,
  dispatch,
  type ListenerName,
  isSupervisorMessage,
  monotonicMicros,
  type SupervisorMessage,
  type WorkerInit,
  type WorkerMessage,
} from '../shared/ipc/protocol.ts';
import type { SupervisorStats } from '../shared/api-types.ts';
import { type ErrorChange, RecentErrors } from '../shared/recent-errors.ts';
import { LogBuffer } from '../shared/log-buffer.ts';
import { DebugFacilities } from '../shared/debug-facilities.ts';
import { buildApp } from './http/app.ts';
import { ConnectionPool } from './http/connection-pool.ts';
import { Service } from './service/service.ts';
import { StandbyMonitor } from './service/standby-monitor.ts';
import { homePaths } from './service/home-paths.ts';
import { ownGuiDir } from '../shared/paths.ts';
import { Requests } from '../shared/ipc/requests.ts';
import type { SaveAnswer } from '../shared/ipc/protocol.ts';
import { configEvents } from './config/config-events.ts';
import { lowerPriority } from './low-priority.ts';
import { WorkerConfig } from './config/worker-config.ts';
import { EventLog } from './events/event-log.ts';
import { requestReset } from './service/reset-request.ts';
import { shortIdOf } from '../shared/device-id.ts';
import type { Access } from './http/admission.ts';

/** The IPC side of the worker's parent: `process` in a real worker. */
export interface ParentChannel {
  send?: (message: WorkerMessage, callback?: (error: Error | null) => void) => unknown;
  connected?: boolean;
  on(event: 'message', listener: (message: unknown, handle: unknown) => void): unknown;
}

// A restart leaves idle keep-alive clients a moment to send one last request, which is answered with
// Connection: close, instead of closing under them while they may be writing.
const RESTART_IDLE_GRACE_MS = 1000;

/**
 * Runs a worker: waits for the supervisor's init, serves the connections it hands over, answers its
 * heartbeats, and drains when told. Resolves when the worker has stopped and may exit.
 */
export function runWorker(
  parent: ParentChannel,
  options: { testRoutes?: boolean; onReady?: () => void } = {},
): Promise<void> {
  return new Promise((stopped) => {
    const early: Array<[SupervisorMessage, unknown]> = [];
    let handle: ((message: SupervisorMessage, extra: unknown) => void) | undefined;
    parent.on('message', (message, extra) => {
      if (!isSupervisorMessage(message)) return;
      if (handle) handle(message, extra);
      else if (message.type === 'syncd:init') {
        handle = (m, e) => early.push([m, e]);
        void start(message.init).then((serve) => {
          handle = serve;
          for (const [m, e] of early.splice(0)) serve(m, e);
        });
      }
    });

    async function start(init: WorkerInit) {
      const { settings } = init;
      // Messages on their way out: the process exits only once they are (process.exit drops them).
      let sending = 0;
      let sent: (() => void) | undefined;
      const send = (message: WorkerMessage) => {
        if (parent.connected === false || !parent.send) return;
        sending += 1;
        parent.send(message, () => {
          sending -= 1;
          if (sending === 0) sent?.();
        });
      };
      // A restart or shutdown asked of the supervisor, with when it was asked: a restart is done by a
      // worker started after that (see Supervisor's restart).
      const act = (action: Action) => send({ type: 'syncd:action', action, askedAt: monotonicMicros() });
      const allSent = () =>
        new Promise<void>((resolve) => {
          if (sending === 0) return resolve();
          sent = resolve;
          setTimeout(resolve, 1000).unref();
        });
      // The supervisor keeps the list across workers; this copy serves reads, and every change made
      // here goes to the supervisor, which passes it on.
      const errors = new RecentErrors(init.errors);
      const change = (made: ErrorChange) => {
        errors.apply(made);
        send({ type: 'syncd:errors', change: made });
      };
      // The lines behind /rest/system/log, and the parts whose debug lines can be turned on alone.
      const logBuffer = new LogBuffer();
      const logger = createLogger(
        'worker',
        settings.logLevel,
        (error, slot) => change({ op: 'add', error, slot }),
        await logDestination(settings.logFormat ?? 'json'),
        logBuffer.stream(),
      );
      const facilities = new DebugFacilities(logger, settings.trace);
      const lowPriority = init.config.options.setLowPriority;
      let supervisor: SupervisorStats = init.supervisor;
      let draining = false;
      const events = new EventLog(init.eventIdBase);
      events.log('Starting', { home: init.home, myID: init.deviceId });
      // Saves go to the supervisor, which keeps the configuration; each answer settles its request.
      const saves = new Requests<(answer: SaveAnswer) => void>();
      const config = new WorkerConfig({
        config: init.config,
        revision: init.configRevision,
        myId: init.deviceId,
        save: (next, base) =>
          new Promise((resolve) => {
            if (parent.connected === false || !parent.send) {
              resolve({ ok: false, status: 500, message: 'the supervisor is gone; nothing was saved' });
              return;
            }
            send({ type: 'syncd:config-save', seq: saves.open(resolve), config: next, base });
          }),
      });
      config.onChange(configEvents(events));
      // Loaded when the service is first acquired, after the worker is ready: the first answers need
      // none of the index, scanner, devices and protocol code, and the worker's start does not parse it.
      const service = new Service(async () =>
        (await import('./service/open-service.ts')).openService({
          home: init.home,
          config,
          events,
          shortId: shortIdOf(init.deviceId),
          myId: init.deviceId,
          credentials: init.device,
          logger,
          log: (facility) => facilities.logger(facility),
          listening: () => sync,
          announce: init.announce,
          restart: () => act('restart'),
        }),
      );
      const access: Access = { apiKey: init.apiKey, allowedHosts: init.allowedHosts };
      let sync = init.sync;
      const status = {
        startTime: new Date(),
        address: init.address,
        supervisor: () => supervisor,
        serviceHeld: () => service.held,
        sync: () => sync,
      };

      // syncd's own GUI unless a folder replaces it, or none with --gui 0.
      const guiFolder = settings.gui === false ? undefined : (settings.guiAssets ?? ownGuiDir);
      const app = buildApp({
        apiKey: init.apiKey,
        deviceId: init.deviceId,
        logger,
        log: { buffer: logBuffer, facilities },
        paths: homePaths(init.home, guiFolder),
        guiAssets: guiFolder,
        ownGui: settings.gui !== false && settings.guiAssets === undefined,
        // The GUI's tokens outlast workers: every worker makes them under the device's own key.
        guiSecret: init.device.key,
        errors: { list: errors, change },
        status,
        access,
        config,
        events,
        model: () => service.current?.model,
        whenHeld: (ms) => service.whenHeld(ms),
        reset: (folder) => requestReset(init.home, folder),
        guiAddressOverridden: init.overridden.guiAddress,
        // By Syncthing's field names: what changing them would not change while these flags are given.
        overrides: {
          'gui.address': init.overridden.guiAddress,
          'gui.apiKey': init.overridden.apiKey,
          'gui.useTLS': init.overridden.tls,
          'options.localAnnounceEnabled': init.announce.local !== null,
          'options.globalAnnounceEnabled': init.announce.global !== null,
        },
        // gui.useTLS applies at the next start of the service, unless a flag decides it, and
        // options.setLowPriority at the next start of the worker.
        requiresRestart: () =>
          (!init.overridden.tls && config.current.gui.useTLS !== (init.tls !== null)) ||
          config.current.options.setLowPriority !== lowPriority,
        onAction: act,
        isDraining: () => draining,
        // Requests come only once connections are served, after the pool exists.
        onProven: (socket) => pool.prove(socket),
        testRoutes: options.testRoutes ? { service } : undefined,
        allowedHosts: init.allowedHosts,
        limits: { headersTimeoutMs: settings.headersTimeoutMs, requestTimeoutMs: settings.requestTimeoutMs },
        tls: init.tls,
      });
      await app.ready();
      const pool = new ConnectionPool(app.server, settings.maxConnections, (evicted) =>
        logger.warn(
          { evicted, maxConnections: settings.maxConnections, slot: 'connection-limit' },
          `closed ${evicted} connections that had sent no request with the API key, to stay within ${settings.maxConnections} connections`,
        ),
      );
      // Each listener's connections: the REST interface's to the HTTP pool, other devices' to the
      // service, if this worker still holds it (a device whose connection is closed dials again).
      const serveOn: Record<ListenerName, (socket: Socket) => void> = {
        gui: (socket) => pool.serve(socket),
        sync: (socket) => {
          const connections = service.current?.connections;
          if (connections) connections.accept(socket);
          else socket.destroy();
        },
      };
      const stopReporting = reportDroppedLines(logger, standardOutput());
      const standby = new StandbyMonitor({
        enabled: () => config.current.options.restartOnWakeup,
        restart: () => act('restart'),
        log: (message) => logger.info({ slot: 'standby' }, message),
      });
      standby.start();

      const drain = async (reason: DrainReason) => {
        if (draining) return;
        draining = true;
        service.stopWaiting();
        events.close();
        logger.info({ reason, connections: pool.size }, 'worker draining');
        const idleGraceMs =
          reason === 'restart' ? Math.min(RESTART_IDLE_GRACE_MS, settings.drainTimeoutMs) : 0;
        // What it holds is let go while its requests are answered: it exits once both are done.
        const [{ cut }] = await Promise.all([
          pool.drain({ idleGraceMs, timeoutMs: settings.drainTimeoutMs }),
          release(),
        ]);
        if (cut > 0) {
          logger.warn(
            { cut, drainTimeoutMs: settings.drainTimeoutMs },
            `drain timeout passed; cut ${cut} connections`,
          );
        }
        await app.close();
        stopReporting();
        standby.stop();
        logger.info({ reason }, 'worker stopped');
        await allSent();
        stopped();
      };

      const release = () =>
        service
          .release()
          .catch((error: Error) => logger.error({ err: error }, 'releasing the service failed'));

      const handlers: Dispatch<SupervisorMessage, [unknown]> = {
        'syncd:init': () => logger.warn('a second init from the supervisor was ignored'),
        'syncd:connection': (message, socket) => {
          // Node delivers the message without its handle when the handle could not be taken: not
          // acknowledged, the supervisor closes its copy once this worker answers a later message.
          if (!socket) return;
          serveOn[message.listener](socket as Socket);
          send({ type: 'syncd:accepted', seq: message.seq, listener: message.listener });
        },
        'syncd:stats': (message) => {
          supervisor = message.supervisor;
        },
        'syncd:errors': (message) => errors.apply(message.change),
        'syncd:drain': (message) => void drain(message.reason),
        'syncd:heartbeat': (message) => send({ type: 'syncd:heartbeat', seq: message.seq }),
        'syncd:acquire': ({ seq }) => {
          service.acquire().then(
            () => send({ type: 'syncd:acquired', seq }),
            (error: Error) => send({ type: 'syncd:acquire-failed', seq, error: error.message }),
          );
        },
        'syncd:release': ({ seq }) => void release().then(() => send({ type: 'syncd:released', seq })),
        'syncd:config': (message) => config.apply(message.config, message.revision),
        'syncd:config-answer': ({ seq, answer }) => saves.settle(seq)?.(answer),
        'syncd:serving': ({ serving }) => {
          access.apiKey = serving.apiKey;
          access.allowedHosts = serving.allowedHosts;
          status.address = serving.address;
          sync = serving.sync;
        },
      };
      send({ type: 'syncd:ready' });
      // options.setLowPriority, as Syncthing applies it, once the worker is ready: it starts at its
      // supervisor's priority, so that a restart comes back at once however busy the machine, and
      // the supervisor keeps it, as Syncthing's monitor does, to answer and hand over at once.
      const notLowered = lowPriority ? lowerPriority() : undefined;
      if (notLowered) {
        logger.warn(`options.setLowPriority: the worker's priority could not be lowered: ${notLowered}`);
      }
      events.log('StartupComplete', { myID: init.deviceId });
      facilities.logger('main').debug('worker ready');
      // Syncthing's first line, for the log viewer.
      facilities.logger('main').info({ myID: init.deviceId }, `My ID: ${init.deviceId}`);
      options.onReady?.();
      return (message: SupervisorMessage, extra: unknown) => dispatch(handlers, message, extra);
    }
  });
}
