import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { SupervisorStats } from '../../shared/api-types.ts';
import { residentBytes } from './process-usage.ts';
import type { DeviceConfiguration, FolderConfiguration } from '../../shared/config/defaults.ts';
import { versionInfo } from '../../shared/version.ts';
import type { WorkerConfig } from '../config/worker-config.ts';
import type { SyncModel } from '../service/model.ts';
import type { EventTally, FolderActivity } from './event-tally.ts';
import type { StatusSource } from './routes/system.ts';

export interface MetricSources {
  config?: WorkerConfig;
  model?: () => SyncModel | undefined;
  status: StatusSource;
  tally?: EventTally;
}

export interface Metrics {
  contentType: string;
  /** The exposition text, read from the sources now. */
  text(): Promise<string>;
}

/**
 * GET /metrics, as Syncthing 2.x exposes it (lib/model/metrics.go, lib/protocol/metrics.go,
 * lib/connections/metrics.go, lib/config/metrics.go, lib/events/metrics.go): its names where syncd has
 * the same quantity, read from the model and configuration at each scrape; `syncd_` names for what
 * Syncthing has no word for (the supervisor's restarts, crashes and memory); and the worker's process
 * and Node.js metrics, prom-client's defaults.
 */
export function metrics(sources: MetricSources): Metrics {
  const registry = new Registry();
  let now = emptySnapshot(sources.status.supervisor());
  registerSyncthingMetrics(registry, () => now, sources.tally);
  registerSyncdMetrics(registry, () => now);
  const own = processRegistry();
  return {
    contentType: registry.contentType,
    text: async () => {
      // The event loop's delays are sampled from the registry's start: the first scrape waits for a few.
      const sampling = own.startedAt + FIRST_SAMPLES_MS - performance.now();
      if (sampling > 0) await new Promise((resolve) => setTimeout(resolve, sampling));
      now = await snapshot(sources);
      const text = `${await own.registry.metrics()}\n${await registry.metrics()}`;
      // prom-client writes NaN (an event loop not sampled yet) as `Nan`; the format spells it NaN.
      return text.replace(/ Nan$/gm, ' NaN');
    },
  };
}

/** What one scrape reads, once, for every metric that shows a part of it. */
interface Snapshot {
  /** The folders not paused, with their status while this worker holds the model. */
  folders: Array<{ folder: FolderConfiguration; status?: Record<string, unknown> }>;
  allFolders: FolderConfiguration[];
  /** The other devices of the configuration. */
  devices: DeviceConfiguration[];
  /** Every device of the configuration, this one included (lib/config/metrics.go lists them all). */
  allDevices: DeviceConfiguration[];
  connected?: ReadonlyMap<string, unknown>;
  traffic?: ReadonlyMap<string, { inBytes: number; outBytes: number }>;
  supervisor: SupervisorStats;
  supervisorRss?: number;
  held: boolean;
  atMs: number;
}

function emptySnapshot(supervisor: SupervisorStats): Snapshot {
  return {
    folders: [],
    allFolders: [],
    devices: [],
    allDevices: [],
    supervisor,
    held: false,
    atMs: Date.now(),
  };
}

async function snapshot({ config, model, status }: MetricSources): Promise<Snapshot> {
  const supervisor = status.supervisor();
  const held = model?.();
  const allFolders = config?.current.folders ?? [];
  return {
    folders: allFolders
      .filter((folder) => !folder.paused)
      .map((folder) => ({ folder, status: held && statusOf(held, folder.id) })),
    allFolders,
    devices: config?.current.devices.filter(({ deviceID }) => deviceID !== config.myId) ?? [],
    allDevices: config?.current.devices ?? [],
    connected: held?.connections(),
    traffic: held?.traffic(),
    supervisor,
    supervisorRss: await residentBytes(supervisor.pid),
    held: status.serviceHeld?.() ?? false,
    atMs: Date.now(),
  };
}

function statusOf(model: SyncModel, folder: string): Record<string, unknown> | undefined {
  try {
    return model.folderStatus(folder);
  } catch {
    // The service closing under the scrape: the folder is left out of this one.
    return undefined;
  }
}

function registerSyncthingMetrics(registry: Registry, now: () => Snapshot, tally: EventTally | undefined) {
  const metric = define(registry);
  metric.gauge('syncthing_model_folder_state', 'Current folder state', ['folder'], () =>
    now().folders.flatMap(({ folder, status }) => {
      const state = FOLDER_STATES[String(status?.state)];
      return state === undefined ? [] : [[{ folder: folder.id }, state]];
    }),
  );
  metric.gauge(
    'syncthing_model_folder_summary',
    'Current folder summary data (counts for global/local/need files/directories/symlinks/deleted/bytes)',
    ['folder', 'scope', 'type'],
    () =>
      now().folders.flatMap(({ folder, status }) =>
        SUMMARY_FIELDS.flatMap(([scope, type, field]) => {
          const value = status?.[field];
          return typeof value === 'number' ? [[{ folder: folder.id, scope, type }, value]] : [];
        }),
      ),
  );
  // Syncthing registers these for every folder it runs, so that they are there while zero.
  const activity = (id: string) => tally?.folders.get(id) ?? NO_ACTIVITY;
  const under = (state: string, status: Record<string, unknown> | undefined) =>
    status?.state === state ? Math.max(0, now().atMs - Date.parse(String(status.stateChanged))) / 1000 : 0;
  const folderCounters: Array<[string, string, (id: string, status?: Record<string, unknown>) => number]> = [
    ['scans_total', 'Total number of folder scan iterations', (id) => activity(id).scans],
    [
      'scan_seconds_total',
      'Total time spent in folder scan iterations',
      (id, status) => activity(id).scanSeconds + under('scanning', status),
    ],
    ['pulls_total', 'Total number of folder pull iterations', (id) => activity(id).pulls],
    [
      'pull_seconds_total',
      'Total time spent in folder pull iterations',
      (id, status) => activity(id).pullSeconds + under('syncing', status),
    ],
  ];
  for (const [name, help, read] of folderCounters) {
    metric.counter(`syncthing_model_folder_${name}`, `${help}, per folder ID`, ['folder'], () =>
      now().folders.map(({ folder, status }): Sample => [{ folder: folder.id }, read(folder.id, status)]),
    );
  }

  const perDevice = (read: (device: string) => number) => () =>
    now().traffic ? now().devices.map(({ deviceID }): Sample => [{ device: deviceID }, read(deviceID)]) : [];
  for (const [name, help, way] of [
    ['sent_bytes_total', 'Total amount of data sent, per device', 'outBytes'],
    ['recv_bytes_total', 'Total amount of data received, per device', 'inBytes'],
  ] as const) {
    metric.counter(
      `syncthing_protocol_${name}`,
      help,
      ['device'],
      perDevice((device) => now().traffic?.get(device)?.[way] ?? 0),
    );
  }
  metric.gauge(
    'syncthing_connections_active',
    'Number of currently active connections, per device. If value is 0, the device is disconnected.',
    ['device'],
    perDevice((device) => (now().connected?.has(device) ? 1 : 0)),
  );

  // Labels on a constant 1, one for each configured folder and device.
  const info = (name: string, help: string, labels: string[], rows: () => Array<Record<string, string>>) =>
    metric.gauge(name, help, labels, () => rows().map((row): Sample => [row, 1]));
  const folderLabels = ['folder', 'label', 'type', 'path', 'paused'];
  const deviceLabels = ['device', 'name', 'introducer', 'paused', 'untrusted'];
  info(
    'syncthing_config_folder_info',
    'Provides additional information labels on folders',
    folderLabels,
    () =>
      now().allFolders.map(({ id, label, type, path, paused }) => ({
        folder: id,
        label,
        type,
        path,
        paused: String(paused),
      })),
  );
  info(
    'syncthing_config_device_info',
    'Provides additional information labels on devices',
    deviceLabels,
    () =>
      now().allDevices.map(({ deviceID, name, introducer, paused, untrusted }) => ({
        device: deviceID,
        name,
        introducer: String(introducer),
        paused: String(paused),
        untrusted: String(untrusted),
      })),
  );
  if (tally) {
    metric.counter(
      'syncthing_events_total',
      'Total number of created/forwarded/dropped events',
      ['event', 'state'],
      () => [...tally.events].map(([event, count]): Sample => [{ event, state: 'created' }, count]),
    );
  }
}

function registerSyncdMetrics(registry: Registry, now: () => Snapshot) {
  const metric = define(registry);
  metric.counter(
    'syncd_worker_restarts_total',
    'Workers started by a restart asked for (the REST API, SIGHUP), since the supervisor started',
    [],
    () => [[{}, now().supervisor.restarts]],
  );
  metric.counter(
    'syncd_worker_crashes_total',
    'Workers that exited unasked (an exception, a signal, out of memory, a hang), since the supervisor started',
    [],
    () => [[{}, now().supervisor.crashes]],
  );
  metric.gauge(
    'syncd_supervisor_start_time_seconds',
    'Start time of the supervisor since unix epoch in seconds',
    [],
    () => {
      const ms = Date.parse(now().supervisor.startTime);
      return Number.isNaN(ms) ? [] : [[{}, ms / 1000]];
    },
  );
  metric.gauge(
    'syncd_supervisor_resident_memory_bytes',
    "The supervisor's resident memory size in bytes (Linux only)",
    [],
    () => {
      const rss = now().supervisorRss;
      return rss === undefined ? [] : [[{}, rss]];
    },
  );
  metric.gauge(
    'syncd_service_held',
    'Whether this worker holds the service (the index, folders, connections): 1, or 0 during a handover',
    [],
    () => [[{}, now().held ? 1 : 0]],
  );
  metric.gauge('syncd_build_info', "A constant 1, labeled by syncd's version", ['version'], () => [
    [{ version: versionInfo().version }, 1],
  ]);
}

type Sample = [labels: Record<string, string>, value: number];

/** Gauges and counters whose values are read at each scrape, set whole from `read`. */
function define(registry: Registry) {
  const make = (kind: 'gauge' | 'counter') => {
    return (name: string, help: string, labelNames: string[], read: () => Sample[]) => {
      const options = { name, help, labelNames, registers: [registry] };
      if (kind === 'gauge') {
        new Gauge({
          ...options,
          collect() {
            this.reset();
            for (const [labels, value] of read()) this.set(labels, value);
          },
        });
      } else {
        new Counter({
          ...options,
          collect() {
            this.reset();
            for (const [labels, value] of read()) this.inc(labels, value);
          },
        });
      }
    };
  };
  return { gauge: make('gauge'), counter: make('counter') };
}

let processMetrics: { registry: Registry; startedAt: number } | undefined;
// prom-client's event loop histogram samples every 10 ms: a first scrape waits for some samples.
const FIRST_SAMPLES_MS = 100;

/**
 * The process's own metrics (memory, CPU, heap, event loop, GC), one set per process: prom-client's
 * defaults watch the process itself, from their start (the first scrape). Its CPU counters count from
 * there too: the time before is added once, so that they tell the process's whole CPU time, as
 * process_start_time_seconds leads a reader to expect.
 */
function processRegistry(): { registry: Registry; startedAt: number } {
  if (!processMetrics) {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const { user, system } = process.cpuUsage();
    const add = (name: string, micros: number) =>
      (registry.getSingleMetric(name) as Counter | undefined)?.inc(micros / 1e6);
    add('process_cpu_user_seconds_total', user);
    add('process_cpu_system_seconds_total', system);
    add('process_cpu_seconds_total', user + system);
    processMetrics = { registry, startedAt: performance.now() };
  }
  return processMetrics;
}

const NO_ACTIVITY: FolderActivity = { scans: 0, scanSeconds: 0, pulls: 0, pullSeconds: 0 };

// Syncthing's folderState values (lib/model/folderstate.go); syncd's `paused` has none, as Syncthing
// runs no paused folder.
const FOLDER_STATES: Record<string, number> = {
  idle: 0,
  scanning: 1,
  'scan-waiting': 2,
  'sync-waiting': 3,
  'sync-preparing': 4,
  syncing: 5,
  cleaning: 6,
  'clean-waiting': 7,
  error: 8,
  starting: 9,
};

// The summary's scopes and types (lib/model/folder_summary.go), and the status field each reads.
const SUMMARY_FIELDS: ReadonlyArray<[scope: string, type: string, field: string]> = [
  ['global', 'files', 'globalFiles'],
  ['global', 'directories', 'globalDirectories'],
  ['global', 'symlinks', 'globalSymlinks'],
  ['global', 'deleted', 'globalDeleted'],
  ['global', 'bytes', 'globalBytes'],
  ['local', 'files', 'localFiles'],
  ['local', 'directories', 'localDirectories'],
  ['local', 'symlinks', 'localSymlinks'],
  ['local', 'deleted', 'localDeleted'],
  ['local', 'bytes', 'localBytes'],
  ['need', 'files', 'needFiles'],
  ['need', 'directories', 'needDirectories'],
  ['need', 'symlinks', 'needSymlinks'],
  ['need', 'deleted', 'needDeletes'],
  ['need', 'bytes', 'needBytes'],
];
