import { cpus, totalmem } from 'node:os';
import type { FastifyInstance, FastifyPluginOptions, FastifyRequest } from 'fastify';
import type { Configuration } from '../../../shared/config/defaults.ts';
import { versionInfo } from '../../../shared/version.ts';
import type { WorkerConfig } from '../../config/worker-config.ts';
import type { SyncModel } from '../../service/model.ts';
import { invalidQuery } from '../http-errors.ts';

export interface ReportRouteOptions extends FastifyPluginOptions {
  config: WorkerConfig;
  model: () => SyncModel | undefined;
  startTime: Date;
}

/** The usage report's newest version Syncthing 1.19 makes, and what it answers by default. */
const REPORT_VERSION = 3;
const MIB = 1024 * 1024;

type Report = Record<string, unknown>;

/**
 * GET /rest/svc/report: the usage report Syncthing would send, shown by its GUI before a user agrees
 * to send it (lib/api/api.go getReport, lib/ur/usage_report.go). syncd sends no report anywhere; this
 * is the preview, made of what syncd knows: the counts, the configuration's uses and the machine. The
 * CPU benchmark Syncthing runs for it (a second or more of hashing) is left out, as its empty fields
 * are (every field is `omitempty` in Syncthing's contract).
 */
export async function reportRoutes(app: FastifyInstance, options: ReportRouteOptions): Promise<void> {
  app.get('/report', async (request) => {
    const version = versionOf(request);
    const config = options.config.current;
    const report: Report = { ...v1(config, options.model()) };
    if (version >= 2) Object.assign(report, v2(config));
    if (version >= 3) Object.assign(report, v3(config, options.startTime));
    return { ...omitEmpty(report), urVersion: version };
  });
}

function versionOf(request: FastifyRequest): number {
  const given = (request.query as { version?: unknown }).version;
  if (given === undefined || given === '') return REPORT_VERSION;
  const version = typeof given === 'string' ? Number(given) : Number.NaN;
  if (!Number.isInteger(version) || version < 1) {
    throw invalidQuery(`version must be a whole number of at least 1, not "${String(given)}"`);
  }
  // Syncthing answers a newer version with the fields it knows.
  return Math.min(version, REPORT_VERSION);
}

function v1(config: Configuration, model: SyncModel | undefined): Report {
  const version = versionInfo();
  let totFiles = 0;
  let folderMaxFiles = 0;
  let totBytes = 0;
  let folderMaxBytes = 0;
  for (const folder of config.folders) {
    const status = model?.folderStatus(folder.id) ?? {};
    const files = Number(status.localFiles ?? 0);
    const bytes = Number(status.localBytes ?? 0);
    totFiles += files;
    totBytes += bytes;
    folderMaxFiles = Math.max(folderMaxFiles, files);
    folderMaxBytes = Math.max(folderMaxBytes, bytes);
  }
  return {
    version: version.version,
    longVersion: version.longVersion,
    platform: `${version.os}-${version.arch}`,
    numFolders: config.folders.length,
    numDevices: config.devices.length,
    totFiles,
    folderMaxFiles,
    totMiB: Math.floor(totBytes / MIB),
    folderMaxMiB: Math.floor(folderMaxBytes / MIB),
    memoryUsageMiB: Math.floor(process.memoryUsage().heapTotal / MIB),
    memorySize: Math.floor(totalmem() / MIB),
    processRSSMiB: Math.floor(process.memoryUsage.rss() / MIB),
  };
}

function v2(config: Configuration): Report {
  const { folders, devices, options } = config;
  const servers = options.globalAnnounceServers;
  return {
    numCPU: cpus().length,
    folderUses: {
      sendonly: count(folders, (f) => f.type === 'sendonly'),
      sendreceive: count(folders, (f) => f.type === 'sendreceive'),
      receiveonly: count(folders, (f) => f.type === 'receiveonly'),
      ignorePerms: count(folders, (f) => f.ignorePerms),
      ignoreDelete: count(folders, (f) => f.ignoreDelete),
      autoNormalize: count(folders, (f) => f.autoNormalize),
      simpleVersioning: count(folders, (f) => f.versioning.type === 'simple'),
      externalVersioning: count(folders, (f) => f.versioning.type === 'external'),
      staggeredVersioning: count(folders, (f) => f.versioning.type === 'staggered'),
      trashcanVersioning: count(folders, (f) => f.versioning.type === 'trashcan'),
    },
    deviceUses: {
      introducer: count(devices, (d) => d.introducer),
      customCertName: count(devices, (d) => d.certName !== ''),
      compressAlways: count(devices, (d) => d.compression === 'always'),
      compressMetadata: count(devices, (d) => d.compression === 'metadata'),
      compressNever: count(devices, (d) => d.compression === 'never'),
      dynamicAddr: count(devices, (d) => d.addresses.includes('dynamic')),
      staticAddr: count(devices, (d) => d.addresses.some((address) => address !== 'dynamic')),
    },
    announce: {
      globalEnabled: options.globalAnnounceEnabled,
      localEnabled: options.localAnnounceEnabled,
      defaultServersDNS: count(servers, (s) => s === 'default'),
      otherServers: count(servers, (s) => s !== 'default'),
    },
    relays: { enabled: options.relaysEnabled },
    usesRateLimit: options.maxSendKbps > 0 || options.maxRecvKbps > 0,
    upgradeAllowedManual: false,
    upgradeAllowedAuto: false,
    rescanIntvs: folders.map((f) => f.rescanIntervalS),
  };
}

function v3(config: Configuration, startTime: Date): Report {
  const { folders, options } = config;
  const uses = (test: (folder: Configuration['folders'][number]) => boolean) => count(folders, test);
  return {
    uptime: Math.floor((Date.now() - startTime.getTime()) / 1000),
    alwaysLocalNets: options.alwaysLocalNets.length > 0,
    overwriteRemoteDeviceNames: options.overwriteRemoteDeviceNamesOnConnect,
    progressEmitterEnabled: options.progressUpdateIntervalS > -1,
    customTrafficClass: options.trafficClass !== 0,
    customTempIndexMinBlocks: options.tempIndexMinBlocks !== 10,
    limitBandwidthInLan: options.limitBandwidthInLan,
    restartOnWakeup: options.restartOnWakeup,
    customStunServers: options.stunServers.some((server) => server !== 'default'),
    folderUsesV3: {
      scanProgressDisabled: uses((f) => f.scanProgressIntervalS < 0),
      conflictsDisabled: uses((f) => f.maxConflicts === 0),
      conflictsUnlimited: uses((f) => f.maxConflicts < 0),
      conflictsOther: uses((f) => f.maxConflicts > 0 && f.maxConflicts !== 10),
      fsWatcherEnabled: uses((f) => f.fsWatcherEnabled),
      pullOrder: tally(folders.map((f) => f.order)),
      fsWatcherDelays: folders.filter((f) => f.fsWatcherEnabled).map((f) => f.fsWatcherDelayS),
      customMarkerName: uses((f) => f.markerName !== '.stfolder'),
      caseSensitiveFS: uses((f) => f.caseSensitiveFS),
    },
  };
}

function count<T>(items: readonly T[], test: (item: T) => boolean): number {
  return items.filter(test).length;
}

function tally(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

/**
 * Syncthing's `omitempty`: zero numbers, false, empty strings, lists and maps are left out; a nested
 * report (a Go struct) always stays, `{}` when all of it is empty.
 */
function omitEmpty(value: Report, nested = false): Report {
  const out: Report = {};
  for (const [key, field] of Object.entries(value)) {
    if (field === 0 || field === false || field === '' || field === undefined) continue;
    if (Array.isArray(field)) {
      if (field.length > 0) out[key] = field;
      continue;
    }
    if (typeof field === 'object' && field !== null) {
      const inner = omitEmpty(field as Report, true);
      // A map (pullOrder) inside a struct is left out when empty, as a list is.
      if (!nested || Object.keys(inner).length > 0) out[key] = inner;
      continue;
    }
    out[key] = field;
  }
  return out;
}
