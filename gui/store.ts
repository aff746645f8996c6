// What the page knows of the service, as signals: the views read them, and live.ts keeps them current
// from the event stream, with a few reads on a timer (rates, CPU) that no event carries.
import { batch, computed, signal } from '@preact/signals';
import { get } from './api.ts';
import type {
  Completion,
  Configuration,
  Connections,
  FolderError,
  FolderStatus,
  PendingDevice,
  PendingFolders,
  RecentError,
  SystemStatus,
  Version,
} from './types.ts';

export const config = signal<Configuration | undefined>(undefined);
export const status = signal<SystemStatus | undefined>(undefined);
export const version = signal<Version | undefined>(undefined);
export const connections = signal<Connections | undefined>(undefined);
export const folderStatus = signal<Record<string, FolderStatus>>({});
export const folderErrors = signal<Record<string, FolderError[]>>({});
/** Completion of a folder on a device, keyed `folder device`; of a device as a whole, `" device"`. */
export const completion = signal<Record<string, Completion>>({});
export const pendingDevices = signal<Record<string, PendingDevice>>({});
export const pendingFolders = signal<PendingFolders>({});
export const recentErrors = signal<RecentError[]>([]);
/** The last DownloadProgress: by folder, file name → bytes done and total. */
export const downloads = signal<Record<string, Record<string, { bytesDone: number; bytesTotal: number }>>>(
  {},
);

/** Bytes of a folder's files being pulled that are here already (DownloadProgress). */
export function pulledBytes(folder: string): number {
  let done = 0;
  for (const file of Object.values(downloads.value[folder] ?? {})) done += file.bytesDone;
  return done;
}

/**
 * How much of a folder's global data is here: the files in sync (Syncthing's syncPercentage) and
 * what has come of those being pulled, so that one large file moves the bar as it comes.
 */
export function syncPercent(folder: string, status: FolderStatus): number {
  if (status.globalBytes <= 0) return 100;
  return Math.min(100, (100 * (status.inSyncBytes + pulledBytes(folder))) / status.globalBytes);
}

/** Bytes a second brought in for a folder, from its last two statuses while it pulls. */
export const folderRate = signal<Record<string, number>>({});
/** Scan progress by folder, from FolderScanProgress events. */
export const scanProgress = signal<Record<string, { current: number; total: number; rate: number }>>({});
export const restartRequired = signal(false);
/** Why nothing could be read, in the service's words (shown instead of "Loading…"). */
export const loadError = signal('');

/** One reading of a device's traffic: bytes a second in and out since the reading before. */
export interface RateSample {
  at: number;
  in: number;
  out: number;
}
/** The rates of the last minutes, by device ID, and `total`. */
export const rates = signal<Record<string, RateSample[]>>({});
export const RATE_SAMPLES = 60;

/** CPU percentages of the worker and the supervisor, from the last two statuses. */
export const cpu = signal<{ worker?: number; supervisor?: number }>({});

export const myID = computed(() => status.value?.myID ?? '');
export const otherDevices = computed(() =>
  (config.value?.devices ?? []).filter((device) => device.deviceID !== myID.value),
);
export const ownDevice = computed(() =>
  config.value?.devices.find((device) => device.deviceID === myID.value),
);

/** Whether a flag of syncd's decides configuration field `name` (`gui.apiKey`…): changing it acts not. */
export const overridden = (name: string) => status.value?.overrides?.[name] === true;

/** A device's name as configured, else the start of its ID. */
export function deviceName(id: string): string {
  const device = config.value?.devices.find((candidate) => candidate.deviceID === id);
  return device?.name || id.slice(0, 7);
}

export async function refreshConfig(): Promise<void> {
  const [next, required] = await Promise.all([
    get<Configuration>('/rest/config'),
    get<{ requiresRestart: boolean }>('/rest/config/restart-required'),
  ]);
  batch(() => {
    config.value = next;
    restartRequired.value = required.requiresRestart;
  });
}

export async function refreshStatus(): Promise<void> {
  const before = status.value;
  const next = await get<SystemStatus>('/rest/system/status');
  const percent = (was?: { cpuSeconds: number }, now?: { cpuSeconds: number }) => {
    if (!was || !now || !before?.usage || !next.usage) return undefined;
    const seconds = (Date.parse(next.usage.at) - Date.parse(before.usage.at)) / 1000;
    return seconds > 0 ? Math.max(0, (100 * (now.cpuSeconds - was.cpuSeconds)) / seconds) : undefined;
  };
  const samePids = before?.usage?.worker.pid === next.usage?.worker.pid;
  batch(() => {
    cpu.value = {
      worker: samePids ? percent(before?.usage?.worker, next.usage?.worker) : undefined,
      supervisor: percent(before?.usage?.supervisor, next.usage?.supervisor),
    };
    status.value = next;
  });
}

export async function refreshVersion(): Promise<void> {
  version.value = await get<Version>('/rest/system/version');
}

export async function refreshConnections(): Promise<void> {
  const before = connections.value;
  const next = await get<Connections>('/rest/system/connections');
  const now = Date.now();
  const sample = (
    was: { at?: string; inBytesTotal: number; outBytesTotal: number } | undefined,
    is: { at?: string; inBytesTotal: number; outBytesTotal: number },
  ): RateSample | undefined => {
    if (!was?.at || !is.at) return undefined;
    const seconds = (Date.parse(is.at) - Date.parse(was.at)) / 1000;
    if (!(seconds > 0)) return undefined;
    return {
      at: now,
      in: Math.max(0, (is.inBytesTotal - was.inBytesTotal) / seconds),
      out: Math.max(0, (is.outBytesTotal - was.outBytesTotal) / seconds),
    };
  };
  const all = { ...rates.value };
  const add = (key: string, value: RateSample | undefined) => {
    if (value) all[key] = [...(all[key] ?? []), value].slice(-RATE_SAMPLES);
  };
  add('total', sample(before?.total, next.total));
  for (const [id, connection] of Object.entries(next.connections)) {
    const was = before?.connections[id];
    add(id, connection.connected && was?.connected ? sample(was, connection) : { at: now, in: 0, out: 0 });
  }
  batch(() => {
    connections.value = next;
    rates.value = all;
  });
}

export async function refreshFolder(id: string): Promise<void> {
  const before = folderRead.get(id);
  let next: FolderStatus;
  try {
    next = await get<FolderStatus>('/rest/db/status', { folder: id });
  } catch {
    // A folder removed meanwhile: the configuration's next reading drops it.
    return;
  }
  const now = Date.now();
  const here = next.inSyncBytes + pulledBytes(id);
  folderRead.set(id, { at: now, here });
  const rate =
    before && next.state === 'syncing' && now > before.at
      ? Math.max(0, ((here - before.here) * 1000) / (now - before.at))
      : 0;
  batch(() => {
    folderStatus.value = { ...folderStatus.value, [id]: next };
    folderRate.value = { ...folderRate.value, [id]: rate };
  });
}
/** When each folder's status was last read, and how many of its bytes were here then. */
const folderRead = new Map<string, { at: number; here: number }>();

export async function refreshFolderErrors(id: string): Promise<void> {
  const answer = await get<{ errors: FolderError[] | null }>('/rest/folder/errors', { folder: id });
  folderErrors.value = { ...folderErrors.value, [id]: answer.errors ?? [] };
}

export async function refreshCompletion(folder: string, device: string): Promise<void> {
  const answer = await get<Completion>('/rest/db/completion', { folder, device });
  completion.value = { ...completion.value, [`${folder} ${device}`]: answer };
}

export async function refreshDeviceCompletion(device: string): Promise<void> {
  const answer = await get<Completion>('/rest/db/completion', { device });
  completion.value = { ...completion.value, [` ${device}`]: answer };
}

export async function refreshPending(): Promise<void> {
  const [devices, folders] = await Promise.all([
    get<Record<string, PendingDevice>>('/rest/cluster/pending/devices'),
    get<PendingFolders>('/rest/cluster/pending/folders'),
  ]);
  batch(() => {
    pendingDevices.value = devices;
    pendingFolders.value = folders;
  });
}

export async function refreshErrors(): Promise<void> {
  const answer = await get<{ errors: RecentError[] | null }>('/rest/system/error');
  recentErrors.value = answer.errors ?? [];
}

/** Every folder's status and errors, and the completion of each folder on each device it is shared with. */
export async function refreshFolders(): Promise<void> {
  const folders = config.value?.folders ?? [];
  await Promise.all(
    folders.flatMap((folder) => [
      refreshFolder(folder.id),
      refreshFolderErrors(folder.id).catch(() => undefined),
      ...folder.devices
        .filter((device) => device.deviceID !== myID.value)
        .map((device) => refreshCompletion(folder.id, device.deviceID).catch(() => undefined)),
    ]),
  );
}

export async function refreshDevices(): Promise<void> {
  await Promise.all([
    refreshConnections(),
    ...otherDevices.value.map((device) => refreshDeviceCompletion(device.deviceID).catch(() => undefined)),
  ]);
}

/** Everything, as at the page's load and when the service is back. */
export async function refreshAll(): Promise<void> {
  // A worker started anew pulls nothing yet: the next DownloadProgress says what it does.
  downloads.value = {};
  await Promise.all([refreshStatus(), refreshConfig(), refreshVersion()]);
  await Promise.all([refreshFolders(), refreshDevices(), refreshPending(), refreshErrors()]);
}
