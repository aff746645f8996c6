import { hostname } from 'node:os';
import { join } from 'node:path';
import { formatAddress } from '../shared/address.ts';
import { loadConfigFile } from '../shared/config/config-file.ts';
import { allowedHostsFor } from '../shared/hosts.ts';
import {
  CONFIG_FILE,
  newApiKey,
  prepareHome,
  removeAddressFiles,
  writeAddressFiles,
} from '../shared/home.ts';
import { LossyOutput } from '../shared/lossy-output.ts';
import type { DestinationStream } from 'pino';
import {
  createLogger,
  type Logger,
  logDestination,
  reportDroppedLines,
  standardOutput,
} from '../shared/logger.ts';
import { RecentErrors } from '../shared/recent-errors.ts';
import {
  defaultLogFormat,
  readSettings,
  SettingError,
  type Settings,
  usage,
  wantsHelp,
} from '../shared/settings.ts';
import { type Identity, loadIdentity } from '../shared/identity.ts';
import { fingerprint, loadTls } from '../shared/tls.ts';
import { allSteps, ConfigStore } from './config-store.ts';
import { SyncListener } from './sync-listener.ts';
import { type GuiServing, guiSaveStep, guiServing } from './gui-config.ts';
import { type HomeLock, lockHome } from './home-lock.ts';
import { type Listener, Listeners } from './listeners.ts';
import { fitConnections, openFileLimit } from './open-files.ts';
import { catchSignals, type SignalQueue } from './signals.ts';
import { EXIT_BAD_CONFIG, EXIT_OK, EXIT_UNEXPECTED, Supervisor } from './supervisor.ts';
import type { SyncListening } from '../shared/ipc/protocol.ts';
import { type EarlyWorker, WorkerProcess } from './worker-process.ts';

/** What the supervisor process uses of its surroundings; tests give their own. */
export interface SupervisorIo {
  signals: SignalQueue;
  stdin: Pick<NodeJS.ReadStream, 'once' | 'resume' | 'pause'>;
  /** Text for a person at a terminal; undefined when stderr is not one. */
  tell: ((text: string) => void) | undefined;
  /** Where the log lines go: standard output (JSON lines, or text through logDestination). */
  log: DestinationStream;
  /** The first worker, started already (see startWorkerEarly); otherwise the first spawn starts one. */
  firstWorker?: EarlyWorker;
}

function processIo(signals: SignalQueue, firstWorker: EarlyWorker | undefined): SupervisorIo {
  return {
    signals,
    firstWorker,
    stdin: process.stdin,
    tell: process.stderr.isTTY ? (text) => process.stderr.write(text) : undefined,
    log: standardOutput(),
  };
}

/** `syncd serve ARGS`: --help, or the service; resolves with the exit code once output is flushed. */
export async function serveCommand(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  signals: SignalQueue = catchSignals(),
  firstWorker?: EarlyWorker,
): Promise<number> {
  if (wantsHelp(argv)) {
    firstWorker?.discard();
    process.stdout.write(`${usage()}\n`);
    return EXIT_OK;
  }
  let code: number;
  try {
    code = await runSupervisor(argv, env, processIo(signals, firstWorker));
  } catch (error) {
    process.stderr.write(`syncd supervisor: unexpected failure: ${(error as Error).stack ?? error}\n`);
    code = EXIT_UNEXPECTED;
  }
  // A worker started early and never adopted (the supervisor did not start) ends with it.
  firstWorker?.discard();
  // The last lines say how it ended; a reader that is stuck does not hold the exit for long.
  await standardOutput().flush(1000);
  return code;
}

/**
 * Reads the settings, prepares the home, binds the address and supervises workers until shutdown.
 * Resolves with the exit code: 0 shutdown, 2 bad configuration, 3 gave up after crashes.
 */
export async function runSupervisor(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: SupervisorIo,
): Promise<number> {
  // Warnings are recent errors; the supervisor keeps the list and hands it to every worker.
  const errors = new RecentErrors();
  let record = errors.add.bind(errors);
  const onWarning: typeof record = (error, slot) => record(error, slot);
  let logger: Logger | undefined;
  let startup: Startup;
  try {
    const settings = readSettings(argv, env);
    const destination = await logDestination(settings.logFormat, io.log);
    logger = createLogger('supervisor', settings.logLevel, onWarning, destination);
    startup = await start(settings, logger);
  } catch (error) {
    if (!(error instanceof SettingError)) throw error;
    // Settings that cannot be read are told in the format the output has when none is given.
    logger ??= createLogger(
      'supervisor',
      'info',
      onWarning,
      await logDestination(defaultLogFormat(), io.log),
    );
    logger.fatal({ setting: error.setting }, error.message);
    io.tell?.(`syncd serve: ${error.message}\nRun syncd serve --help for the settings.\n`);
    return EXIT_BAD_CONFIG;
  }

  const { settings, gui, keySource, listeners, address, url, tls, lock, identity, store } = startup;
  let written = { address, url };
  const tlsFields = tls ? { tls: tls.source, fingerprint: fingerprint(tls.cert) } : {};
  const stderr = new LossyOutput(2);
  let firstWorker = io.firstWorker;
  // The sync listener is not the REST interface's: a port another program holds is reported and tried
  // again, and the service serves meanwhile.
  const sync = new SyncListener({ listeners, logger, flag: settings.syncAddress });
  let serveSync = (_listening: SyncListening): void => {};
  await sync.start(store.config, (listening) => serveSync(listening));
  logger.info(
    {
      myID: identity.deviceId,
      address,
      url,
      home: settings.home,
      apiKey: keySource,
      config: join(settings.home, CONFIG_FILE),
      identity: identity.source,
      ...tlsFields,
      // Where other devices reach it: each listen address, as bound.
      sync: Object.entries(sync.listening).map(([text, { bound, error }]) => bound ?? `${text}: ${error}`),
    },
    'supervisor started',
  );
  // At a terminal, the way into the web GUI: the API key after a # is never sent to the server, and
  // the page keeps it for its tab (gui/main.tsx). Never in the log, which others may collect.
  if (settings.gui && settings.guiAssets === undefined) {
    io.tell?.(`syncd's web GUI: ${url}/#key=${encodeURIComponent(gui.apiKey)}\n`);
  }
  const supervisor = new Supervisor({
    settings,
    worker: {
      apiKey: gui.apiKey,
      deviceId: identity.deviceId,
      device: { cert: identity.cert, key: identity.key },
      home: settings.home,
      address,
      allowedHosts: allowedHostsFor((listeners.get('gui') as Listener).bound, settings.allowedHosts),
      tls: tls ? { cert: tls.cert, key: tls.key } : null,
      overridden: gui.overridden,
      sync: sync.listening,
      announce: { local: settings.localAnnounce ?? null, global: settings.globalAnnounce ?? null },
    },
    config: store,
    closeListeners: () => listeners.close(),
    logger,
    errors,
    spawn: (events) => {
      const early = firstWorker;
      firstWorker = undefined;
      return early ? early.adopt(events, { stderr }) : new WorkerProcess(events, { stderr });
    },
  });
  record = (error, slot) => supervisor.recordError({ op: 'add', error, slot });
  serveSync = (listening) => supervisor.serve({ sync: listening });
  // A saved GUI address or key, or sync listen address, moves what is served; the rest of a save is
  // the workers' business.
  store.prepareWith(
    allSteps(
      guiSaveStep({
        listeners,
        settings,
        overridden: gui.overridden,
        serve: (serving) => supervisor.serve(serving),
        moved: async (moved) => {
          const now = { address: moved, url: `${tls ? 'https' : 'http'}://${moved}` };
          await writeAddressFiles(settings.home, now.address, now.url).catch((error: Error) =>
            logger.error({ err: error }, `could not record the new GUI address: ${error.message}`),
          );
          written = now;
          logger.info({ address: moved }, 'listening on the new GUI address');
        },
      }),
      sync.saveStep,
    ),
  );
  listeners.startAccepting((name, socket) => supervisor.accept(name, socket));
  supervisor.start();
  io.signals.deliverTo((signal) => supervisor.signal(signal));
  if (settings.stopWithStdin) {
    io.stdin.once('end', () => supervisor.shutdown('standard input closed'));
    io.stdin.resume();
  }
  const stopReporting = reportDroppedLines(logger, standardOutput());
  const code = await supervisor.done;
  sync.stop();
  stopReporting();
  io.signals.release();
  if (settings.stopWithStdin) io.stdin.pause();
  // Cleaning up after itself never turns a clean stop into a failure: a home that went away is reported.
  await Promise.all([removeAddressFiles(settings.home, written), lock.release()]).catch((error) =>
    logger.warn({ err: error }, `could not clean up the home ${settings.home}: ${(error as Error).message}`),
  );
  return code;
}

interface Startup {
  settings: Settings;
  gui: GuiServing;
  keySource: 'setting' | 'config' | 'generated';
  store: ConfigStore;
  listeners: Listeners;
  address: string;
  url: string;
  tls: Awaited<ReturnType<typeof loadTls>> | undefined;
  lock: HomeLock;
  identity: Identity;
}

/** The home (locked for this service), the key, TLS, and the listening socket: all a worker needs. */
async function start(wanted: Settings, logger: Logger): Promise<Startup> {
  const fitted = fitConnections(
    wanted.maxConnections,
    wanted.given.has('maxConnections'),
    await openFileLimit(),
  );
  if (fitted.warning) logger.warn({ maxConnections: fitted.maxConnections }, fitted.warning);
  const settings = { ...wanted, maxConnections: fitted.maxConnections };
  await prepareHome(settings.home);
  const lock = await lockHome(settings.home);
  try {
    const identity = await loadIdentity(settings.home);
    const path = join(settings.home, CONFIG_FILE);
    const loaded = await loadConfigFile(path, {
      myId: identity.deviceId,
      deviceName: hostname(),
      newApiKey,
    });
    if (loaded.dropped.length > 0) {
      logger.warn(
        { dropped: loaded.dropped },
        `${path} had fields this version has no place for, dropped: ${loaded.dropped.join(', ')}`,
      );
    }
    const store = new ConfigStore(path, loaded.config);
    if (loaded.changed) await store.write();
    const gui = guiServing(loaded.config, settings);
    const keySource =
      settings.apiKey !== undefined ? 'setting' : loaded.keyGenerated ? 'generated' : 'config';
    const tls = gui.tls
      ? await loadTls(settings.home, { cert: settings.tlsCert, key: settings.tlsKey })
      : undefined;
    const listeners = new Listeners();
    const address = formatAddress((await listeners.bind('gui', gui.address)).bound);
    const url = `${tls ? 'https' : 'http'}://${address}`;
    try {
      await writeAddressFiles(settings.home, address, url);
    } catch (error) {
      listeners.close();
      throw error;
    }
    return { settings, gui, keySource, store, listeners, address, url, tls, lock, identity };
  } catch (error) {
    await lock.release();
    throw error;
  }
}
