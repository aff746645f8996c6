import type { ConflictCopies } from '../../shared/api-types.ts';
import type { FileRecord } from '../records/file-record.ts';
import type { IgnorePreview } from '../scanner/ignore-preview.ts';

export type { IgnorePreview };

/*
 * What the REST face (and through it the CLI) may ask of the engine: Syncthing's model.Model interface
 * as lib/api calls it (lib/model/model.go), trimmed to what syncd serves. The routes parse, call one of
 * these and shape the answer; the rules (what a folder's completion is, what "locally changed" means,
 * when new ignores rescan) live behind it, where the engine can use them too. Tests of the routes use a
 * fake of it (test/helpers/fake-model.ts); service/sync-model.ts is the implementation.
 */
export interface SyncModel {
  /** Syncthing's GET /rest/db/status body for a configured folder, or its error state. */
  folderStatus(folder: string): Record<string, unknown>;
  /** The global version of `name`, this device's own record, and who else has the global version. */
  file(folder: string, name: string): FileAvailability | undefined;
  /**
   * Scans the folder (all of it, or `subs`), or every folder when `folder` is undefined. `subs` is
   * read once the folder is known to be scannable, so that its refusals come first, as in Syncthing.
   */
  scan(folder: string | undefined, subs: () => string[]): Promise<void>;
  /** The index's tree below `prefix`, `levels` deep (-1: all), as GET /rest/db/browse nests it. */
  browse(folder: string, prefix: string, levels: number, dirsOnly: boolean): TreeEntry[];
  /** What a device (this one when none is given) lacks, in pages: this one's files being pulled first. */
  need(folder: string, page: Page, device?: string): FileRecord[];
  /** The names of the folder's files being pulled now. */
  pulling(folder: string): ReadonlySet<string>;
  /** Pulls `name` before the folder's other needed files (Syncthing's BringToFront). */
  bringToFront(folder: string, name: string): void;
  /**
   * The folder's conflict copies by the file each is a copy of (syncd's own, for its GUI), at most
   * `limit` copies; `truncated` when there are more.
   */
  conflicts(folder: string, limit: number): ConflictCopies;
  /** The changes a receive-only folder keeps (what a revert gives up), one page. */
  localChanged(folder: string, page: Page): FileRecord[];
  /** Syncthing's override of a send-only folder and revert of a receive-only one, once done. */
  override(folder: string): Promise<void>;
  revert(folder: string): Promise<void>;
  /** Completion of the folders, summed, for `device` (this one when undefined). */
  completion(folders: readonly string[], device?: string): Completion;
  /** The folder's .stignore lines (null without one) and the patterns they expand to. */
  ignores(folder: string): Promise<IgnoreLines>;
  /**
   * Writes the folder's .stignore and scans it anew; refuses lines that do not parse. `lines` is read
   * once the folder is known to run.
   */
  setIgnores(folder: string, lines: () => string[]): Promise<IgnoreLines>;
  /**
   * What `lines` would ignore in the folder, as a scan would apply them, bounded; nothing is written.
   * Refuses lines that do not parse, as setIgnores does. `lines` is read once the folder is known.
   */
  ignoresPreview(folder: string, lines: () => string[]): Promise<IgnorePreview>;
  /** The items the last scan or pull could not handle, one page. */
  folderErrors(folder: string, page: Page): Array<{ path: string; error: string }>;
  /** Each folder's last scan and last file, for GET /rest/stats/folder. */
  folderStats(folders: readonly string[]): Record<string, unknown>;
  /**
   * The folder's versions by name; restore answers the names that failed, with why. `wanted` (names
   * and version times) is read once the folder is known to keep versions.
   */
  versions(folder: string): Promise<Record<string, Version[]>>;
  restoreVersions(
    folder: string,
    wanted: () => ReadonlyArray<[string, Date]>,
  ): Promise<Record<string, string>>;

  /** The devices connected now. */
  connections(): ReadonlyMap<string, ConnectedDevice>;
  /** Bytes received and sent with each device since the service started, ended connections' included. */
  traffic(): ReadonlyMap<string, { inBytes: number; outBytes: number }>;
  lastDialStatus(): Record<string, unknown>;
  /** The relay listen addresses, as connectionServiceStatus shows listeners. */
  relayStatus(): Record<string, unknown>;
  deviceStats(): Record<string, unknown>;
  pendingDevices(): Array<{ device: string; time: string; name: string; address: string }>;
  dismissPendingDevice(device: string): void;
  pendingFolders(device?: string): Record<string, unknown>;
  dismissPendingFolder(folder: string, device?: string): void;

  /** Discovery's status fields for GET /rest/system/status, its cache, and a hint of an address. */
  discoveryStatus(): Record<string, unknown>;
  discoveryCache(): Record<string, unknown>;
  hintAddress(device: string, url: string): void;
}

/** Why the model refused: the REST face answers each kind with its own code (http/http-errors.ts). */
export type ModelErrorKind =
  | 'folder-paused'
  | 'folder-not-running'
  | 'folder-type'
  | 'no-versioning'
  | 'invalid-ignores';

export class ModelError extends Error {
  readonly kind: ModelErrorKind;
  constructor(kind: ModelErrorKind, message: string) {
    super(message);
    this.name = 'ModelError';
    this.kind = kind;
  }
}

export interface Page {
  page: number;
  perpage: number;
}

export interface FileAvailability {
  global: FileRecord;
  local: FileRecord | undefined;
  /** The devices besides this one that have the global version. */
  holders: string[];
}

export interface TreeEntry {
  name: string;
  modTime: string;
  size: number;
  type: string;
  children?: TreeEntry[];
}

/** Conflict copies by the file they were made of, as GET /rest/syncd/conflicts answers them. */
export type { ConflictCopies };

export interface Completion {
  completion: number;
  globalBytes: number;
  globalItems: number;
  needBytes: number;
  needDeletes: number;
  needItems: number;
  sequence: number;
}

export interface IgnoreLines {
  ignore: string[] | null;
  expanded: string[] | null;
}

export interface Version {
  versionTime: Date;
  modTime: Date;
  size: number;
}

/** A device connected now, as GET /rest/system/connections shows it. */
export interface ConnectedDevice {
  inBytes: number;
  outBytes: number;
  startedAt: Date;
  address: string;
  clientVersion: string;
  type: string;
  crypto: string;
}
