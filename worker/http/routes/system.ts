import { homedir } from 'node:os';
import { sep } from 'node:path';
import type {
  FastifyInstance,
  FastifyPluginOptions,
  FastifyReply,
  FastifyRequest,
  preHandlerHookHandler,
} from 'fastify';
import type { SupervisorStats } from '../../../shared/api-types.ts';
import { ownUsage, processUsage } from '../process-usage.ts';
import type { Action, SyncListening } from '../../../shared/ipc/protocol.ts';
import type { SyncModel } from '../../service/model.ts';
import { type ErrorChange, RecentErrors } from '../../../shared/recent-errors.ts';
import { versionInfo } from '../../../shared/version.ts';
import type { WorkerConfig } from '../../config/worker-config.ts';
import { emptyErrorText, invalidQuery, noSuch, notImplemented, upgradeUnsupported } from '../http-errors.ts';
import { formatSyncUrl, parseSyncUrl } from '../../../shared/sync-url.ts';
import { lanAddresses, wanAddresses } from '../../../shared/listener-addresses.ts';
import { heldModel } from './held-model.ts';
import { checkedDeviceId } from './config.ts';
import { browse } from './browse.ts';

/** The recent errors: read from this worker's copy, changed everywhere through `change`. */
export interface ErrorList {
  list: RecentErrors;
  change: (change: ErrorChange) => void;
}

export interface StatusSource {
  startTime: Date;
  /** HOST:PORT the supervisor bound. */
  address: string;
  supervisor: () => SupervisorStats;
  /** Whether this worker holds the service (see worker/service/service.ts). */
  serviceHeld?: () => boolean;
  /** The sync protocol's listeners, as the supervisor bound them. */
  sync?: () => SyncListening;
}

interface SystemRouteOptions extends FastifyPluginOptions {
  deviceId?: string;
  config?: WorkerConfig;
  /** Whether a flag or variable decides the GUI address rather than the configuration. */
  guiAddressOverridden?: boolean;
  /** Configuration fields a flag or the environment decides while the service runs. */
  overrides?: Record<string, boolean>;
  /** The model (the devices' connections among it), while this worker holds the service. */
  model?: () => SyncModel | undefined;
  /** Records a reset of a folder's index (every folder's when undefined), carried out after a restart. */
  reset?: (folder: string | undefined) => Promise<void>;
  errors: ErrorList;
  status: StatusSource;
  /** The files the service keeps, by Syncthing 2.x's names (see service/home-paths.ts). */
  paths?: Record<string, string>;
  onAction: (action: Action) => void;
  /** Waits for the model while a restart hands it over (see held-model.ts). */
  modelWait?: preHandlerHookHandler;
  /** Closes the request's connection once what was read on it is answered. */
  closeAfterAnswering: (request: FastifyRequest) => void;
}

/** The largest body an action accepts: the error text posted to /rest/system/error included. */
export const BODY_LIMIT = 64 * 1024;
const RAW_BODY_TYPE = 'application/octet-stream';

/** Syncthing's answer to a ping, and the type of it and of the bodies made here as JSON text. */
export const PING_BODY = JSON.stringify({ ping: 'pong' });
export const JSON_TYPE = 'application/json; charset=utf-8';

/** The /rest/system endpoints; registered under that prefix. */
export async function systemRoutes(app: FastifyInstance, options: SystemRouteOptions): Promise<void> {
  const { errors, status, onAction, closeAfterAnswering } = options;

  // Actions take a body of any type, or none, and never answer 415: every body stays raw, and a
  // malformed type is not even looked at. Only here: other routes parse what they are sent.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request, body, done) =>
    done(null, body),
  );
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.headers['content-type'] !== undefined) request.headers['content-type'] = RAW_BODY_TYPE;
    done();
  });
  // The same bytes as the answer given before Fastify (see fastPing in server.ts).
  // Async, as every route: the answer goes out after the requests pipelined behind it are counted.
  const pong = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.type(JSON_TYPE);
    return PING_BODY;
  };

  app.get('/ping', pong);
  app.post('/ping', pong);

  // The answer goes out in full before the supervisor hears of the action, and it closes its
  // connection so that the client's next request reaches whichever worker serves after it.
  const action = (name: Action, answer: string) => ({
    onResponse: async (_request: FastifyRequest, reply: FastifyReply) => {
      if (reply.statusCode === 200) onAction(name);
    },
    handler: async (request: FastifyRequest) => {
      closeAfterAnswering(request);
      return { ok: answer };
    },
  });
  app.post('/restart', action('restart', 'restarting'));
  app.post('/shutdown', action('shutdown', 'shutting down'));

  // The list's JSON is made once per change and shared by every reader: reading costs no serializing.
  app.get('/error', async (_request, reply) => {
    reply.type(JSON_TYPE);
    return errors.list.body();
  });
  app.post('/error', async (request) => {
    const body = request.body as Buffer | undefined;
    const message = body?.toString('utf8').trim() ?? '';
    if (message === '') throw emptyErrorText();
    errors.change({ op: 'add', error: { when: new Date().toISOString(), message, level: 50 } });
    return { ok: 'recorded' };
  });
  app.post('/error/clear', async () => {
    errors.change({ op: 'clear' });
    return { ok: 'cleared' };
  });

  app.get('/status', async () => {
    const memory = process.memoryUsage();
    const supervisor = status.supervisor();
    return {
      myID: options.deviceId,
      pid: process.pid,
      startTime: status.startTime.toISOString(),
      uptime: Math.floor((Date.now() - status.startTime.getTime()) / 1000),
      guiAddressUsed: status.address,
      guiAddressOverridden: options.guiAddressOverridden ?? false,
      overrides: options.overrides ?? {},
      memory: { rss: memory.rss, heapUsed: memory.heapUsed },
      supervisor,
      // For the GUI's CPU and memory of both processes: CPU seconds read twice make a percentage.
      usage: {
        at: new Date().toISOString(),
        worker: ownUsage(),
        supervisor: await processUsage(supervisor.pid),
      },
      service: { held: status.serviceHeld?.() ?? false },
      pathSeparator: sep,
      tilde: homedir(),
      connectionServiceStatus: {
        ...connectionServiceStatus(status.sync?.() ?? {}),
        ...options.model?.()?.relayStatus(),
      },
      lastDialStatus: options.model?.()?.lastDialStatus() ?? {},
      ...options.model?.()?.discoveryStatus(),
    };
  });

  app.get('/version', async () => versionInfo());
  app.get('/browse', async (request) => {
    const { current } = request.query as { current?: unknown };
    return browse(typeof current === 'string' ? current : '');
  });

  // Syncthing 2.x's; the default folder path is the configuration's.
  const { paths } = options;
  if (paths) {
    app.get('/paths', async () => ({
      ...paths,
      ...(options.config ? { defFolder: options.config.current.defaults.folder.path } : {}),
    }));
  }

  // Syncthing's GUI asks after every load; it shows no upgrade when this fails.
  const noUpgrade = async () => {
    throw upgradeUnsupported();
  };
  app.get('/upgrade', noUpgrade);
  app.post('/upgrade', noUpgrade);

  const { config } = options;
  if (config) {
    // One device (`device=ID`) or every device but this one; persisted in the configuration's `paused`.
    const pause = (paused: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
      const { device } = request.query as { device?: string };
      let only: string | undefined;
      if (device !== undefined && device !== '') {
        only = checkedDeviceId(device);
        if (!config.current.devices.some((known) => known.deviceID === only)) {
          throw noSuch(`no device with ID ${only}`);
        }
      }
      await config.change((draft) => {
        for (const known of draft.devices) {
          if (only === undefined ? known.deviceID !== config.myId : known.deviceID === only) {
            known.paused = paused;
          }
        }
      });
      return reply.code(200).send();
    };
    app.post('/pause', pause(true));
    app.post('/resume', pause(false));

    // Every configured device, this one included, as Syncthing lists them, with the figures of those
    // connected.
    app.get('/connections', { preHandler: options.modelWait ? [options.modelWait] : [] }, async () => {
      const now = new Date().toISOString();
      const connected = options.model?.()?.connections();
      const connections: Record<string, unknown> = {};
      let inBytesTotal = 0;
      let outBytesTotal = 0;
      for (const device of config.current.devices) {
        const connection = connected?.get(device.deviceID);
        if (!connection) {
          connections[device.deviceID] = { ...DISCONNECTED, paused: device.paused };
          continue;
        }
        inBytesTotal += connection.inBytes;
        outBytesTotal += connection.outBytes;
        connections[device.deviceID] = {
          at: now,
          inBytesTotal: connection.inBytes,
          outBytesTotal: connection.outBytes,
          startedAt: connection.startedAt.toISOString(),
          connected: true,
          paused: device.paused,
          address: connection.address,
          clientVersion: connection.clientVersion,
          type: connection.type,
          crypto: connection.crypto,
        };
      }
      return { connections, total: { at: now, inBytesTotal, outBytesTotal } };
    });
  }

  const { model } = options;
  if (model) {
    // The discovery cache: every device with addresses known now, configured or not.
    const wait = { preHandler: options.modelWait ? [options.modelWait] : [] };
    app.get('/discovery', wait, async () => heldModel({ model }).discoveryCache());
    // A hint: the address is kept for the device, which is dialed there if it is configured.
    app.post('/discovery', wait, async (request: FastifyRequest, reply: FastifyReply) => {
      const { device, addr } = request.query as { device?: string; addr?: string };
      const id = checkedDeviceId(device ?? '');
      if (addr === undefined || addr === '') throw invalidQuery('give the address as addr=tcp://HOST:PORT');
      const address = parseSyncUrl(addr);
      if (typeof address === 'string') throw invalidQuery(`addr: ${address}`);
      const url = formatSyncUrl(address);
      if (address.port === 0 || /^(0\.0\.0\.0|::|)$/.test(address.host)) {
        throw invalidQuery(`addr: ${url} names no host and port to dial`);
      }
      heldModel({ model }).hintAddress(id, url);
      return reply.code(200).send();
    });
  }

  const { reset } = options;
  if (config && reset) {
    // Answered first; then the restart: this worker lets the index go, and the next one erases what
    // was asked and scans it anew (see worker/service/reset-request.ts). No file of a folder is touched.
    app.post('/reset', {
      onResponse: async (_request: FastifyRequest, reply: FastifyReply) => {
        if (reply.statusCode === 200) onAction('restart');
      },
      handler: async (request: FastifyRequest) => {
        const { folder } = request.query as { folder?: string };
        const id = folder === undefined || folder === '' ? undefined : folder;
        if (id !== undefined && !config.current.folders.some((known) => known.id === id)) {
          throw noSuch(`no such folder: ${JSON.stringify(id)}`);
        }
        await reset(id);
        closeAfterAnswering(request);
        return { ok: id === undefined ? 'resetting database' : `resetting folder ${id}` };
      },
    });
  }

  // Operations of the interface that a later version gives real behaviour: say so, never fake it.
  for (const [method, path] of notBuiltYet) {
    if (path === '/reset' && config && reset) continue;
    if (path === '/discovery' && model) continue;
    app.route({
      method,
      url: path,
      handler: async () => {
        throw notImplemented(method, `/rest/system${path}`);
      },
    });
  }
}

// Go's zero time, which Syncthing writes for a device never connected.
const NEVER = '0001-01-01T00:00:00Z';
const DISCONNECTED = {
  at: NEVER,
  inBytesTotal: 0,
  outBytesTotal: 0,
  startedAt: NEVER,
  connected: false,
  paused: false,
  address: '',
  clientVersion: '',
  type: '',
  crypto: '',
};

/** Syncthing's connectionServiceStatus: each listen address, with where it listens or why it does not. */
function connectionServiceStatus(listening: SyncListening) {
  return Object.fromEntries(
    Object.entries(listening).map(([url, { bound, error }]) => [
      url,
      {
        error,
        lanAddresses: bound ? lanAddresses(bound) : [],
        wanAddresses: bound ? wanAddresses(bound) : [],
      },
    ]),
  );
}

const notBuiltYet = [
  ['POST', '/reset'],
  ['POST', '/discovery'],
  ['GET', '/discovery'],
] as const;

/** A list changed in place only, for an app with no supervisor behind it (tests, benchmarks). */
export function localErrors(list = new RecentErrors()): ErrorList {
  return { list, change: (change) => list.apply(change) };
}
