// The REST shapes the page reads (Syncthing's, and syncd's additions); the configuration's own come
// from the one definition both processes use.
export type {
  Configuration,
  DeviceConfiguration,
  FolderConfiguration,
  GuiConfiguration,
  OptionsConfiguration,
} from '../shared/config/defaults.ts';
export type { ConflictCopies, IgnorePreview, ProcessUsage, RecentError } from '../shared/api-types.ts';
import type { ProcessUsage } from '../shared/api-types.ts';

export interface SystemStatus {
  myID: string;
  startTime: string;
  uptime: number;
  guiAddressUsed: string;
  /** Configuration fields a flag of syncd's decides while it runs, by their Syncthing names. */
  overrides?: Record<string, boolean>;
  connectionServiceStatus: Record<
    string,
    { error: string | null; lanAddresses: string[]; wanAddresses: string[] }
  >;
  discoveryEnabled?: boolean;
  discoveryMethods?: number;
  discoveryStatus?: Record<string, { error: string | null }>;
  supervisor: { pid: number; startTime: string; restarts: number; crashes: number };
  usage?: { worker: ProcessUsage; supervisor?: ProcessUsage; at: string };
}

export interface Version {
  version: string;
  longVersion: string;
  os: string;
  arch: string;
}

export interface Connection {
  at?: string;
  connected: boolean;
  paused: boolean;
  address: string;
  clientVersion: string;
  type: string;
  inBytesTotal: number;
  outBytesTotal: number;
  startedAt?: string;
}

export interface Connections {
  connections: Record<string, Connection>;
  total: { at: string; inBytesTotal: number; outBytesTotal: number };
}

export interface FolderStatus {
  state: string;
  stateChanged: string;
  error?: string;
  errors: number;
  pullErrors: number;
  globalBytes: number;
  globalFiles: number;
  globalDirectories: number;
  globalTotalItems: number;
  localBytes: number;
  localFiles: number;
  localDirectories: number;
  localTotalItems: number;
  needBytes: number;
  needFiles: number;
  needTotalItems: number;
  needDeletes: number;
  inSyncBytes: number;
  receiveOnlyTotalItems: number;
  receiveOnlyChangedBytes: number;
  ignorePatterns: boolean;
}

export interface Completion {
  completion: number;
  globalBytes: number;
  needBytes: number;
  needItems: number;
  needDeletes: number;
  remoteState?: string;
}

export interface PendingDevice {
  time: string;
  name: string;
  address: string;
}

export interface PendingFolders {
  [folderID: string]: { offeredBy: Record<string, { time: string; label: string }> };
}

export interface FolderError {
  path: string;
  error: string;
}

export interface SyncdEvent {
  id: number;
  time: string;
  type: string;
  data: Record<string, unknown>;
}

/** A file as /rest/db/need lists it. */
export interface NeededFile {
  name: string;
  size: number;
  modified: string;
  type: string | number;
  deleted?: boolean;
}

export interface Need {
  progress: NeededFile[];
  queued: NeededFile[];
  rest: NeededFile[];
  page: number;
  perpage: number;
  total?: number;
}
