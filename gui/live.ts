// Keeps the store current: the event stream (/rest/events, long polls) says what changed, and what
// changed is read again; rates and CPU, which no event carries, are read every few seconds. When the
// service stops answering the page says so and tries again each second; once it answers, everything
// is read anew (a restart keeps the event IDs going, so the stream goes on where it was).
import { ApiError, get, loginNeeded, unreachable } from './api.ts';
import * as store from './store.ts';
import type { FolderStatus, SyncdEvent } from './types.ts';

/** Listeners of events by type, for the views that show them (the recent changes, say). */
const listeners = new Set<(event: SyncdEvent) => void>();
export function onEvent(listener: (event: SyncdEvent) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

const POLL_SECONDS = 60;
const TICK_MS = 3_000;
const RETRY_MS = 1_000;

let started = false;

/** Starts following the service; safe to call again after a login. */
export function startLive(): void {
  if (started) return;
  started = true;
  void follow();
  setInterval(tick, TICK_MS);
}

async function follow(): Promise<void> {
  let since: number | undefined;
  let fresh = true;
  for (;;) {
    try {
      if (loginNeeded.value) {
        await sleep(RETRY_MS);
        continue;
      }
      if (fresh) {
        // At the first start, the newest event's ID, so that the buffer's old events are not replayed;
        // after a failure the stream goes on from where it was (IDs go on across restarts).
        if (since === undefined) {
          const last = await get<SyncdEvent[]>('/rest/events', { limit: 1, timeout: 0 });
          since = last.at(-1)?.id ?? 0;
        }
        await store.refreshAll();
        store.loadError.value = '';
        fresh = false;
      }
      const events = await get<SyncdEvent[]>('/rest/events', { since, timeout: POLL_SECONDS });
      for (const event of events) {
        since = Math.max(since ?? 0, event.id);
        handle(event);
      }
    } catch (error) {
      // Unreachable, or a login asked for: either way everything is read again afterwards. Anything
      // else is shown while nothing has loaded (the page would only say "Loading…").
      if (error instanceof ApiError) {
        fresh = true;
        if (error.status > 0 && !loginNeeded.value) store.loadError.value = error.message;
      }
      await sleep(RETRY_MS);
    }
  }
}

const pending = new Set<string>();
let flushTimer: ReturnType<typeof setTimeout> | undefined;

/** Reads again what `key` names, once for a burst of events (within 250 ms). */
function soon(key: string): void {
  pending.add(key);
  flushTimer ??= setTimeout(flush, 250);
}

function flush(): void {
  flushTimer = undefined;
  const keys = [...pending];
  pending.clear();
  const quietly = (promise: Promise<unknown>) => void promise.catch(() => undefined);
  for (const key of keys) {
    const [what, id = '', other = ''] = key.split('\n');
    if (what === 'config') quietly(store.refreshConfig().then(store.refreshFolders));
    else if (what === 'folder') quietly(store.refreshFolder(id));
    else if (what === 'folderErrors') quietly(store.refreshFolderErrors(id));
    else if (what === 'completion') quietly(store.refreshCompletion(id, other));
    else if (what === 'deviceCompletion') quietly(store.refreshDeviceCompletion(id));
    else if (what === 'devices') quietly(store.refreshDevices());
    else if (what === 'pending') quietly(store.refreshPending());
    else if (what === 'errors') quietly(store.refreshErrors());
  }
}

function handle(event: SyncdEvent): void {
  const data = event.data ?? {};
  const folder = typeof data.folder === 'string' ? data.folder : '';
  switch (event.type) {
    case 'ConfigSaved':
      soon('config');
      break;
    case 'FolderSummary':
      if (data.summary && folder) {
        store.folderStatus.value = { ...store.folderStatus.value, [folder]: data.summary as FolderStatus };
      }
      break;
    case 'StateChanged':
      if (folder && data.to !== 'scanning' && store.scanProgress.value[folder]) {
        const { [folder]: _done, ...rest } = store.scanProgress.value;
        store.scanProgress.value = rest;
      }
      if (folder) soon(`folder\n${folder}`);
      break;
    case 'FolderPaused':
    case 'FolderResumed':
    case 'LocalIndexUpdated':
    case 'RemoteIndexUpdated':
      if (folder) soon(`folder\n${folder}`);
      break;
    case 'FolderErrors':
      if (folder) soon(`folderErrors\n${folder}`);
      soon(`folder\n${folder}`);
      break;
    case 'FolderScanProgress':
      store.scanProgress.value = {
        ...store.scanProgress.value,
        [folder]: { current: Number(data.current), total: Number(data.total), rate: Number(data.rate) },
      };
      break;
    case 'FolderCompletion':
      // The device's completion as a whole too: it is made of its folders'.
      if (folder && typeof data.device === 'string') {
        soon(`completion\n${folder}\n${data.device}`);
        soon(`deviceCompletion\n${data.device}`);
      }
      break;
    case 'DownloadProgress':
      store.downloads.value = data as typeof store.downloads.value;
      break;
    case 'DeviceConnected':
    case 'DeviceDisconnected':
    case 'DevicePaused':
    case 'DeviceResumed':
      soon('devices');
      break;
    case 'PendingDevicesChanged':
    case 'PendingFoldersChanged':
      soon('pending');
      break;
    case 'Failure':
      soon('errors');
      break;
  }
  for (const listener of listeners) listener(event);
}

/** What no event carries: traffic, CPU and memory, a pulling folder's rate, recent errors. */
function tick(): void {
  if (unreachable.value || loginNeeded.value || document.hidden) return;
  const quietly = (promise: Promise<unknown>) => void promise.catch(() => undefined);
  quietly(store.refreshConnections());
  quietly(store.refreshStatus());
  quietly(store.refreshErrors());
  for (const [id, folder] of Object.entries(store.folderStatus.value)) {
    if (folder.state === 'syncing' || folder.state === 'scanning') quietly(store.refreshFolder(id));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
