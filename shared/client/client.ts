import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { rootCertificates } from 'node:tls';
import type { DeviceConfiguration, FolderConfiguration } from '../config/defaults.ts';
import type { RecentError } from '../api-types.ts';

export interface ClientOptions {
  /** HOST:PORT, or a base URL such as http://127.0.0.1:8384. */
  address: string;
  apiKey?: string;
  /** Per call; default 10 s. */
  timeoutMs?: number;
  /** A certificate to trust besides the system's, for a service with a self-signed one (PEM). */
  ca?: string;
}

export interface Status {
  /** This device's ID (Syncthing's too). */
  myID: string;
  pid: number;
  startTime: string;
  uptime: number;
  guiAddressUsed: string;
  memory: { rss: number; heapUsed: number };
  supervisor: { pid: number; startTime: string; restarts: number; crashes: number };
  /** Each listen address for other devices: where it listens (lanAddresses), or why not. */
  connectionServiceStatus?: Record<string, { error: string | null; lanAddresses: string[] }>;
  [other: string]: unknown;
}

export interface FolderStatus {
  state: string;
  error?: string;
  localFiles: number;
  localDirectories: number;
  localBytes: number;
  errors: number;
  sequence: number;
  globalBytes: number;
  inSyncBytes: number;
  needBytes: number;
  needTotalItems: number;
  receiveOnlyTotalItems: number;
  receiveOnlyChangedBytes: number;
  pullErrors: number;
  [other: string]: unknown;
}

/** A failed call: the service answered with an error (`status` set) or did not answer (`code` set). */
export class ClientError extends Error {
  readonly status: number | undefined;
  readonly code: string | undefined;
  readonly body: unknown;
  constructor(message: string, details: { status?: number; code?: string; body?: unknown; cause?: unknown }) {
    super(message, { cause: details.cause });
    this.name = 'ClientError';
    this.status = details.status;
    this.code = details.code;
    this.body = details.body;
  }
}

/**
 * A client of the /rest/system interface: one method per operation, a timeout on every call. It sends
 * the key as X-API-Key, as Syncthing's own clients do, so it also speaks to Syncthing.
 */
/** A device's connection as GET /rest/system/connections shows it. */
export interface DeviceConnection {
  connected: boolean;
  paused: boolean;
  address: string;
  clientVersion: string;
  type: string;
  crypto: string;
  startedAt: string;
  inBytesTotal: number;
  outBytesTotal: number;
}

/** One version of a file, as GET /rest/folder/versions answers it (times in RFC 3339). */
export interface FileVersionShown {
  versionTime: string;
  modTime: string;
  size: number;
}

/** A folder offered by other devices, as GET /rest/cluster/pending/folders lists it. */
export interface PendingFolder {
  offeredBy: Record<
    string,
    { time: string; label: string; receiveEncrypted: boolean; remoteEncrypted: boolean }
  >;
}

/** A file as the need and local-changes lists show it. */
export interface NeededFile {
  name: string;
  type: string;
  size: number;
  deleted: boolean;
  modified: string;
  [other: string]: unknown;
}

/** One page of GET /rest/db/need. */
export interface NeedPage {
  progress: NeededFile[];
  queued: NeededFile[];
  rest: NeededFile[];
  page: number;
  perpage: number;
}

/** One event of GET /rest/events. */
export interface ServiceEvent {
  id: number;
  globalID: number;
  time: string;
  type: string;
  data: unknown;
}

export class SyncdClient {
  readonly baseUrl: string;
  readonly #apiKey: string | undefined;
  readonly #timeoutMs: number;
  readonly #ca: string[] | undefined;

  constructor(options: ClientOptions) {
    this.baseUrl = /^https?:\/\//.test(options.address)
      ? options.address.replace(/\/+$/, '')
      : `http://${options.address}`;
    this.#apiKey = options.apiKey;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#ca = options.ca === undefined ? undefined : [...rootCertificates, options.ca];
  }

  ping(): Promise<{ ping: 'pong' }> {
    return this.call('GET', '/rest/system/ping');
  }

  restart(): Promise<{ ok: string }> {
    return this.call('POST', '/rest/system/restart');
  }

  shutdown(): Promise<{ ok: string }> {
    return this.call('POST', '/rest/system/shutdown');
  }

  async errors(): Promise<RecentError[]> {
    const { errors } = await this.call<{ errors: RecentError[] | null }>('GET', '/rest/system/error');
    return errors ?? [];
  }

  addError(message: string): Promise<unknown> {
    return this.call('POST', '/rest/system/error', message);
  }

  clearErrors(): Promise<unknown> {
    return this.call('POST', '/rest/system/error/clear');
  }

  status(): Promise<Status> {
    return this.call('GET', '/rest/system/status');
  }

  devices(): Promise<DeviceConfiguration[]> {
    return this.call('GET', '/rest/config/devices');
  }

  /** Syncthing's GET /rest/system/connections: each configured device's connection, if any. */
  connections(): Promise<{ connections: Record<string, DeviceConnection> }> {
    return this.call('GET', '/rest/system/connections');
  }

  /** The devices that connected without being configured, by device ID. */
  pendingDevices(): Promise<Record<string, { time: string; name: string; address: string }>> {
    return this.call('GET', '/rest/cluster/pending/devices');
  }

  /** Adds a device, or replaces the one with its ID; missing fields come from `defaults.device`. */
  addDevice(device: Partial<DeviceConfiguration> & { deviceID: string }): Promise<unknown> {
    return this.call('POST', '/rest/config/devices', JSON.stringify(device), 'application/json');
  }

  removeDevice(deviceId: string): Promise<unknown> {
    return this.call('DELETE', `/rest/config/devices/${encodeURIComponent(deviceId)}`);
  }

  /** Pauses one device, or every device but this one. */
  pause(deviceId?: string): Promise<unknown> {
    return this.call('POST', `/rest/system/pause${deviceQuery(deviceId)}`);
  }

  resume(deviceId?: string): Promise<unknown> {
    return this.call('POST', `/rest/system/resume${deviceQuery(deviceId)}`);
  }

  folders(): Promise<FolderConfiguration[]> {
    return this.call('GET', '/rest/config/folders');
  }

  /** Adds a folder, or replaces the one with its ID; missing fields come from `defaults.folder`. */
  addFolder(folder: Partial<FolderConfiguration> & { id: string; path: string }): Promise<unknown> {
    return this.call('POST', '/rest/config/folders', JSON.stringify(folder), 'application/json');
  }

  /** Changes the fields given of a folder (`{paused: true}` pauses it). */
  changeFolder(id: string, change: Partial<FolderConfiguration>): Promise<unknown> {
    return this.call(
      'PATCH',
      `/rest/config/folders/${encodeURIComponent(id)}`,
      JSON.stringify(change),
      'application/json',
    );
  }

  /** The folder's state and counters, as GET /rest/db/status answers them. */
  folderStatus(id: string): Promise<FolderStatus> {
    return this.call('GET', `/rest/db/status?folder=${encodeURIComponent(id)}`);
  }

  /** Scans one folder (and answers once the scan has ended), or every folder. */
  scan(id?: string): Promise<unknown> {
    return this.call('POST', `/rest/db/scan${id === undefined ? '' : `?folder=${encodeURIComponent(id)}`}`);
  }

  /** Erases one folder's index (every folder's) and has it rebuilt by a restarted worker. */
  reset(id?: string): Promise<{ ok: string }> {
    return this.call(
      'POST',
      `/rest/system/reset${id === undefined ? '' : `?folder=${encodeURIComponent(id)}`}`,
    );
  }

  /** The versions the folder's versioning keeps, by file (GET /rest/folder/versions). */
  versions(id: string): Promise<Record<string, FileVersionShown[]>> {
    return this.call('GET', `/rest/folder/versions?folder=${encodeURIComponent(id)}`);
  }

  /** Restores files to versions (`{NAME: versionTime}`); answers the failures only, by name. */
  restoreVersions(id: string, versions: Record<string, string>): Promise<Record<string, string>> {
    return this.call(
      'POST',
      `/rest/folder/versions?folder=${encodeURIComponent(id)}`,
      JSON.stringify(versions),
      'application/json',
    );
  }

  /** The folders devices offer that are not shared with them here, by folder ID. */
  pendingFolders(): Promise<Record<string, PendingFolder>> {
    return this.call('GET', '/rest/cluster/pending/folders');
  }

  /** How much of the global versions a device has (this one when none is given), in all folders or one. */
  completion(
    deviceId?: string,
    folder?: string,
  ): Promise<{ completion: number; needBytes: number; needItems: number }> {
    const params = new URLSearchParams();
    if (deviceId !== undefined) params.set('device', deviceId);
    if (folder !== undefined) params.set('folder', folder);
    return this.call('GET', `/rest/db/completion?${params}`);
  }

  /** What a folder added without them gets: GET /rest/config/defaults/folder. */
  folderDefaults(): Promise<FolderConfiguration> {
    return this.call('GET', '/rest/config/defaults/folder');
  }

  /** The directories on the service's machine whose path begins with `current` (GET /rest/system/browse). */
  browse(current: string): Promise<string[]> {
    return this.call('GET', `/rest/system/browse?current=${encodeURIComponent(current)}`);
  }

  /** Forgets a pending device until it connects again. */
  dismissPendingDevice(deviceId: string): Promise<unknown> {
    return this.call('DELETE', `/rest/cluster/pending/devices${deviceQuery(deviceId)}`);
  }

  /** Forgets a pending folder offered by one device, or by every device, until offered again. */
  dismissPendingFolder(id: string, deviceId?: string): Promise<unknown> {
    const device = deviceId === undefined ? '' : `&device=${encodeURIComponent(deviceId)}`;
    return this.call('DELETE', `/rest/cluster/pending/folders?folder=${encodeURIComponent(id)}${device}`);
  }

  /** What this device lacks of the folder's global versions, one page (GET /rest/db/need). */
  need(id: string, page = 1, perpage = 100): Promise<NeedPage> {
    return this.call('GET', `/rest/db/need?folder=${encodeURIComponent(id)}&page=${page}&perpage=${perpage}`);
  }

  /** The changes a receive-only folder keeps (what a revert gives up), one page. */
  localChanged(id: string, page = 1, perpage = 100): Promise<{ files: NeededFile[] }> {
    return this.call(
      'GET',
      `/rest/db/localchanged?folder=${encodeURIComponent(id)}&page=${page}&perpage=${perpage}`,
    );
  }

  /** The items the folder failed to sync or scan, and why (GET /rest/folder/errors). */
  folderErrors(id: string): Promise<{ errors: Array<{ path: string; error: string }> | null }> {
    return this.call('GET', `/rest/folder/errors?folder=${encodeURIComponent(id)}`);
  }

  /** A send-only folder's versions made the global ones again (POST /rest/db/override). */
  override(id: string): Promise<unknown> {
    return this.call('POST', `/rest/db/override?folder=${encodeURIComponent(id)}`);
  }

  /** A receive-only folder's local changes undone (POST /rest/db/revert). */
  revert(id: string): Promise<unknown> {
    return this.call('POST', `/rest/db/revert?folder=${encodeURIComponent(id)}`);
  }

  /** The folder's .stignore: its lines as written (`ignore`) and the patterns they expand to. */
  ignores(id: string): Promise<{ ignore: string[] | null; expanded: string[] | null }> {
    return this.call('GET', `/rest/db/ignores?folder=${encodeURIComponent(id)}`);
  }

  /** Replaces the folder's .stignore with these lines. */
  setIgnores(id: string, lines: string[]): Promise<unknown> {
    return this.call(
      'POST',
      `/rest/db/ignores?folder=${encodeURIComponent(id)}`,
      JSON.stringify({ ignore: lines }),
      'application/json',
    );
  }

  /**
   * Events after `since` (GET /rest/events, or /rest/events/disk), waiting up to `timeoutS` for one;
   * `limit` keeps the newest only.
   */
  events(query: {
    since: number;
    timeoutS: number;
    types?: string;
    limit?: number;
    disk?: boolean;
  }): Promise<ServiceEvent[]> {
    const params = new URLSearchParams({ since: String(query.since), timeout: String(query.timeoutS) });
    if (query.types !== undefined) params.set('events', query.types);
    if (query.limit !== undefined) params.set('limit', String(query.limit));
    return this.call('GET', `/rest/events${query.disk ? '/disk' : ''}?${params}`);
  }

  removeFolder(id: string): Promise<unknown> {
    return this.call('DELETE', `/rest/config/folders/${encodeURIComponent(id)}`);
  }

  /** One request; resolves with the parsed JSON body (or text) of a 2xx answer, else rejects. */
  call<T>(
    method: string,
    path: string,
    body?: string,
    contentType = 'text/plain; charset=utf-8',
  ): Promise<T> {
    const url = `${this.baseUrl}${path}`;
    const headers: Record<string, string> = {};
    if (this.#apiKey !== undefined) headers['x-api-key'] = this.#apiKey;
    if (body !== undefined) {
      headers['content-type'] = contentType;
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    return new Promise((resolve, reject) => {
      const request = url.startsWith('https:') ? httpsRequest : httpRequest;
      const req = request(url, { method, headers, agent: false, ca: this.#ca }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', (error) => reject(noAnswer(method, url, error)));
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          const parsed = parseBody(Buffer.concat(chunks).toString('utf8'), response.headers);
          if (status >= 200 && status < 300) return resolve(parsed as T);
          const message = `the service at ${hostOf(url)} answered ${status}: ${errorMessage(parsed)} (${method} ${path})`;
          reject(new ClientError(message, { status, body: parsed }));
        });
      });
      req.setTimeout(this.#timeoutMs, () =>
        req.destroy(Object.assign(new Error(`no answer within ${this.#timeoutMs}ms`), { code: 'ETIMEDOUT' })),
      );
      req.on('error', (error) => reject(noAnswer(method, url, error)));
      req.end(body);
    });
  }
}

function deviceQuery(deviceId: string | undefined): string {
  return deviceId === undefined ? '' : `?device=${encodeURIComponent(deviceId)}`;
}

function noAnswer(method: string, url: string, error: NodeJS.ErrnoException): ClientError {
  const code = error.code ?? 'EUNKNOWN';
  const why = code === 'ECONNREFUSED' ? 'connection refused' : error.message;
  const message = `no service answering at ${hostOf(url)}: ${why} (${method} ${new URL(url).pathname})`;
  return new ClientError(message, { code, cause: error });
}

function hostOf(url: string): string {
  return new URL(url).host;
}

function parseBody(text: string, headers: IncomingHttpHeaders): unknown {
  if (!headers['content-type']?.includes('json')) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function errorMessage(body: unknown): string {
  if (typeof body === 'object' && body !== null && 'message' in body) return String(body.message);
  return typeof body === 'string' && body !== '' ? body.trim() : '(no message)';
}
