import { join } from 'node:path';
import type { Logger } from '../../shared/logger.ts';
import type { Facility } from '../../shared/debug-facilities.ts';
import type { WorkerConfig } from '../config/worker-config.ts';
import type { EventLog } from '../events/event-log.ts';
import { Folders } from '../folders/folders.ts';
import { INDEX_FILE, IndexDb, IndexDbError } from '../index-db/index-db.ts';
import { HasherPool } from '../scanner/hasher-pool.ts';
import { BlockWriter } from '../sync/block-writer.ts';
import { clearReset, pendingReset } from './reset-request.ts';
import type { Held } from './service.ts';
import type { SessionTimes } from '../bep/session.ts';
import type { DeviceCredentials } from '../bep/tls-options.ts';
import { RelayListeners } from '../relay/relay-listeners.ts';
import { DeviceConnections } from '../devices/device-connections.ts';
import { memoryDeviceStore } from '../devices/device-store.ts';
import { tolerantStore } from '../devices/tolerant-store.ts';
import { Discovery } from '../discovery/discovery.ts';
import { IndexExchange } from '../devices/index-exchange.ts';
import { BlockServer } from '../devices/block-server.ts';
import { pullFolder } from '../sync/pull-folder.ts';
import { homeSpaceProblem } from '../files/disk-space.ts';
import { DownloadProgress, emitDownloadProgress } from '../sync/download-progress.ts';
import type { SyncListening } from '../../shared/ipc/protocol.ts';
import type { SyncModel } from './model.ts';
import { EngineModel } from './sync-model.ts';

/**
 * The service as a worker holds it: the index, the hashing threads, the folders and the devices, and
 * the model the REST face calls (see model.ts).
 */
export interface SyncService extends Held {
  model: SyncModel;
  /** Undefined when the index cannot be used: `indexError` says why, and every folder is in error. */
  db: IndexDb | undefined;
  indexError: string | undefined;
  folders: Folders | undefined;
  connections: DeviceConnections;
  discovery: Discovery;
}

export interface ServiceContext {
  home: string;
  config: WorkerConfig;
  events: EventLog;
  shortId: bigint;
  myId: string;
  /** The device's certificate and key, for the sync protocol. */
  credentials: DeviceCredentials;
  logger: Logger;
  /** The logger of one part of the worker, whose debug lines can be turned on alone. */
  log?: (facility: Facility) => Logger;
  /** Session timings, shorter in tests. */
  times?: SessionTimes;
  /** Where the sync listener is bound (the supervisor says), announced by discovery. */
  listening?: () => SyncListening;
  /** Discovery as a flag sets it, over the configuration's options. */
  announce?: { local: boolean | null; global: boolean | null };
  /** Asks the supervisor for a new worker (an index that could not be opened for lack of space can be now). */
  restart?: () => void;
}

// How often an index that could not be opened for lack of space looks for space again.
const SPACE_RECHECK_MS = 10_000;

/**
 * Opens the index in the home and starts every folder. An index file that cannot be used (not SQLite,
 * another program's, a newer schema, corrupt) is reported and left as it is: the folders then show the
 * error and nothing is scanned, so nothing is lost.
 */
export async function openService(context: ServiceContext): Promise<SyncService> {
  const log = (facility: Facility): Logger => context.log?.(facility) ?? context.logger;
  let db: IndexDb | undefined;
  let indexError: string | undefined;
  let spaceWatch: NodeJS.Timeout | undefined;
  const index = join(context.home, INDEX_FILE);
  const homeSpace = () => homeSpaceProblem(index, context.config.current.options.minHomeDiskFree);
  try {
    db = await IndexDb.open(index);
  } catch (error) {
    if (!(error instanceof IndexDbError)) throw error;
    // A disk too full to open the index on: said as the folders say it, and a new worker (which
    // opens it) once there is space; the file is left as it is.
    const space = await homeSpace();
    indexError = space ?? `the index cannot be used: ${error.message}`;
    context.logger.error({ slot: 'index-db' }, space ? `${space}: ${error.message}` : indexError);
    if (space || /disk is full|ENOSPC/.test(error.message)) {
      // With minHomeDiskFree off, a megabyte free is space enough to try again.
      const minFree = context.config.current.options.minHomeDiskFree;
      const wanted = minFree.value > 0 ? minFree : { value: 1, unit: 'MB' };
      spaceWatch = setInterval(() => {
        void homeSpaceProblem(index, wanted).then((problem) => {
          if (problem || !spaceWatch) return;
          clearInterval(spaceWatch);
          spaceWatch = undefined;
          context.logger.info('there is space on the home disk again: a new worker opens the index');
          context.restart?.();
        });
      }, SPACE_RECHECK_MS);
      spaceWatch.unref();
    }
  }
  if (db) await carryOutReset(db, context);
  const hasher = new HasherPool();
  const writer = new BlockWriter();
  // Started with the service when there are folders to scan: their first scan does not wait for
  // threads to start. Without work they end again (see hasher-pool.ts).
  if (db && context.config.current.folders.length > 0) hasher.warm();
  // The folders, the exchange and the connections hear of each other: bound once all exist.
  const late: { folders?: Folders; connections?: DeviceConnections } = {};
  const connected = (): ReadonlySet<string> => new Set(late.connections?.connections.keys() ?? []);
  const progress = new DownloadProgress();
  const stopProgress = emitDownloadProgress(
    progress,
    context.events,
    () => context.config.current.options.progressUpdateIntervalS,
  );
  const exchange = db
    ? new IndexExchange({
        db,
        myId: context.myId,
        events: context.events,
        logger: log('model'),
        config: () => context.config.current,
        remoteUpdated: (folder) => late.folders?.get(folder)?.remoteUpdated(),
      })
    : undefined;
  const folders = db
    ? new Folders({
        ...context,
        logger: log('model'),
        myId: context.config.myId,
        db,
        hasher,
        connected,
        onLocalUpdate: (folder, records) => exchange?.localUpdated(folder, records),
        keepTemporariesH: () => context.config.current.options.keepTemporariesH,
        homeSpace,
        pull: (folder, signal, writes) =>
          pullFolder({
            folder,
            db,
            connected,
            request: (device, block) =>
              late.connections?.request(device, block) ?? Promise.reject(new Error('not connected')),
            writer,
            recorded: (records) => exchange?.localUpdated(folder.id, records),
            events: context.events,
            logger: log('model'),
            signal,
            progress,
            writes,
          }),
      })
    : undefined;
  late.folders = folders;
  folders?.start();
  // Discovery finds addresses; a configured device found is dialed at once.
  const dialer: { dialNow?: (device: string) => void } = {};
  // The relays joined are addresses of this device as its listening sockets are, announced alike.
  const relays = new RelayListeners({
    config: context.config,
    credentials: context.credentials,
    logger: log('connections'),
    invited: (invitation, relay, relayIp) => late.connections?.acceptInvitation(invitation, relay, relayIp),
  });
  const discovery = new Discovery({
    myId: context.myId,
    credentials: context.credentials,
    config: context.config,
    listening: () => ({ ...context.listening?.(), ...relays.listening() }),
    announce: context.announce ?? { local: null, global: null },
    events: context.events,
    logger: log('discover'),
    discovered: (device) => dialer.dialNow?.(device),
  });
  const blocks = db
    ? new BlockServer({
        db,
        config: () => context.config.current,
        recheck: (folder, name) => late.folders?.get(folder)?.recheck(name),
      })
    : undefined;
  const connections = new DeviceConnections({
    myId: context.myId,
    credentials: context.credentials,
    config: context.config,
    events: context.events,
    logger: log('connections'),
    protocolLogger: log('protocol'),
    store: db ? tolerantStore(db, context.logger) : memoryDeviceStore(),
    index: (folder, device) => exchange?.known(folder, device) ?? { indexId: 0n, maxSequence: 0n },
    exchange,
    blocks,
    times: context.times,
    lookup: (device) => discovery.lookup(device),
  });
  dialer.dialNow = (device) => connections.dialNow(device);
  late.connections = connections;
  await discovery.start();
  connections.start();
  relays.start();
  return {
    model: new EngineModel({
      config: context.config,
      db,
      indexError,
      folders,
      connections,
      discovery,
      relays,
      progress,
    }),
    db,
    indexError,
    folders,
    connections,
    discovery,
    close: async () => {
      // Devices hear why first; then what they might have asked of is let go.
      clearInterval(spaceWatch);
      discovery.close();
      stopProgress();
      await relays.close();
      await connections.close();
      blocks?.close();
      await folders?.stop();
      await hasher.close();
      await writer.close();
      db?.close();
    },
  };
}

// A reset asked for before the restart that brought this worker: the index is erased (new index IDs
// follow), then the folders are scanned anew.
async function carryOutReset(db: IndexDb, context: ServiceContext): Promise<void> {
  const reset = await pendingReset(context.home);
  if (!reset) return;
  const folders = reset.all ? db.folderIds() : reset.folders;
  for (const folder of folders) db.drop(folder);
  await clearReset(context.home);
  context.logger.info(
    { folders },
    reset.all
      ? 'index reset: every folder is indexed anew'
      : `index reset: ${folders.join(', ')} indexed anew`,
  );
}
