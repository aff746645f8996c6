import { join } from 'node:path';
import { writeFileAtomic } from '../../shared/home.ts';
import type { WorkerConfig } from '../config/worker-config.ts';
import { type DeviceConnections, shownVersion } from '../devices/device-connections.ts';
import type { Discovery } from '../discovery/discovery.ts';
import type { RelayListeners } from '../relay/relay-listeners.ts';
import type { DownloadProgress } from '../sync/download-progress.ts';
import { conflictOrigin } from '../sync/conflicts.ts';
import { NotAnsweringError } from '../files/root-probe.ts';
import type { FolderRunner } from '../folders/folder-runner.ts';
import { folderSummary } from '../folders/folder-summary.ts';
import type { Folders } from '../folders/folders.ts';
import { completionReport, type FolderNeed, folderNeed, fullRecords } from '../index-db/global.ts';
import { type IndexDb, LOCAL } from '../index-db/index-db.ts';
import { modifiedTime, REST_TYPE_NAMES, SYNTHETIC_SIZE } from '../records/file-record.ts';
import { globalVersion } from '../records/versions.ts';
import { IGNORE_FILE, IgnoreError, Ignores } from '../scanner/ignores.ts';
import { previewIgnores } from '../scanner/ignore-preview.ts';
import type { Versioner } from '../versioning/versioner.ts';
import {
  type Completion,
  type ConflictCopies,
  type ConnectedDevice,
  type FileAvailability,
  type IgnoreLines,
  type IgnorePreview,
  ModelError,
  type Page,
  type SyncModel,
  type TreeEntry,
  type Version,
} from './model.ts';

/** What the model is made of: the parts openService builds. */
export interface ModelParts {
  config: WorkerConfig;
  /** Undefined when the index cannot be used: `indexError` says why. */
  db: IndexDb | undefined;
  indexError: string | undefined;
  folders: Folders | undefined;
  connections: DeviceConnections;
  discovery: Discovery;
  relays: RelayListeners;
  /** The files being pulled, block by block. */
  progress: DownloadProgress;
}

/** The SyncModel over the engine: each method one rule, delegating to the folders, index and devices. */
export class EngineModel implements SyncModel {
  readonly #parts: ModelParts;

  constructor(parts: ModelParts) {
    this.#parts = parts;
  }

  folderStatus(folder: string): Record<string, unknown> {
    const { db } = this.#parts;
    const runner = this.#parts.folders?.get(folder);
    if (!runner || !db) {
      const error = this.#parts.indexError ?? 'the folder is starting';
      return { folder, state: 'error', error, errors: 0, sequence: 0, version: 0 };
    }
    return folderSummary(runner, db);
  }

  file(folder: string, name: string): FileAvailability | undefined {
    const versions = this.#parts.db?.versionsOf(folder, name) ?? [];
    const found = globalVersion(versions);
    if (!found) return undefined;
    return {
      global: found.global.record,
      local: versions.find((entry) => entry.device === LOCAL)?.record,
      holders: found.holders.filter((device) => device !== LOCAL),
    };
  }

  async scan(folder: string | undefined, subs: () => string[]): Promise<void> {
    if (folder === undefined) {
      await Promise.all(this.#parts.folders?.all().map((runner) => runner.scan()) ?? []);
      return;
    }
    const runner = this.#running(folder, 'cannot be scanned');
    if (runner.config.paused) throw paused(folder, 'resume it to scan');
    await runner.scan(subs());
    if (runner.state === 'error') throw notRunning(folder, 'cannot be scanned', runner.error);
  }

  browse(folder: string, prefix: string, levels: number, dirsOnly: boolean): TreeEntry[] {
    const { db } = this.#parts;
    return db ? browse(db, folder, prefix, levels, dirsOnly) : [];
  }

  need(folder: string, page: Page, device?: string) {
    const { db } = this.#parts;
    if (!db) return [];
    const of = device ?? LOCAL;
    let { needed } = folderNeed(db, folder, of);
    // This device's files being pulled come first, as Syncthing's NeedFolderFiles lists its progress.
    const pulling = device === undefined ? this.pulling(folder) : new Set<string>();
    if (pulling.size > 0) {
      needed = [
        ...needed.filter((item) => pulling.has(item.name)),
        ...needed.filter((item) => !pulling.has(item.name)),
      ];
    }
    return pageOf(needed, page).map((item) => fullRecords(db, folder, item, device)?.global ?? item.global);
  }

  pulling(folder: string): ReadonlySet<string> {
    return this.#parts.progress.pulling(folder);
  }

  localChanged(folder: string, page: Page) {
    const { db } = this.#parts;
    return db
      ? pageOf(
          [...db.iterate(folder)].filter((record) => record.receiveOnlyChanged),
          page,
        )
      : [];
  }

  bringToFront(folder: string, name: string): void {
    this.#parts.folders?.get(folder)?.bringToFront(name);
  }

  conflicts(folder: string, limit: number): ConflictCopies {
    const { db } = this.#parts;
    const found = new Map<string, ConflictCopies['conflicts'][number]>();
    let copies = 0;
    for (const copy of db?.conflictCopies(folder) ?? []) {
      const origin = conflictOrigin(copy.name);
      if (!origin) continue;
      if (copies === limit) return { conflicts: [...found.values()], truncated: true };
      copies += 1;
      let entry = found.get(origin.original);
      if (!entry) {
        const current = db?.summary(folder, origin.original);
        const present = current && !current.deleted && !current.invalid;
        entry = {
          original: origin.original,
          current: present ? { size: current.size, modified: modifiedTime(current) } : null,
          copies: [],
        };
        found.set(origin.original, entry);
      }
      entry.copies.push({
        name: copy.name,
        size: copy.size,
        modified: modifiedTime(copy),
        device: origin.device,
      });
    }
    return { conflicts: [...found.values()], truncated: false };
  }

  override(folder: string): Promise<void> {
    return this.#ofType(folder, 'sendonly', '/rest/db/override', (runner) => runner.override());
  }

  revert(folder: string): Promise<void> {
    return this.#ofType(folder, 'receiveonly', '/rest/db/revert', (runner) => runner.revert());
  }

  completion(folders: readonly string[], device?: string): Completion {
    const { db } = this.#parts;
    const of = device ?? LOCAL;
    const total: FolderNeed = {
      global: { files: 0, directories: 0, symlinks: 0, deleted: 0, bytes: 0 },
      need: { files: 0, directories: 0, symlinks: 0, deleted: 0, bytes: 0 },
      needed: [],
    };
    for (const id of folders) {
      if (!db) continue;
      const { global, need } = folderNeed(db, id, of);
      for (const key of ['files', 'directories', 'symlinks', 'deleted', 'bytes'] as const) {
        total.global[key] += global[key];
        total.need[key] += need[key];
      }
    }
    // Syncthing gives the device's sequence of the folder (this device's own when none is named).
    const only = folders.length === 1 ? folders[0] : undefined;
    const sequence =
      only === undefined || !db
        ? 0
        : of === LOCAL
          ? db.folder(only).sequence
          : db.remoteIndex(only, of).maxSequence;
    return completionReport(total, sequence);
  }

  async ignores(folder: string): Promise<IgnoreLines> {
    const runner = this.#parts.folders?.get(folder);
    if (!runner) return { ignore: null, expanded: null };
    const load = () => refusedIgnores(() => Ignores.load(runner.path));
    return ignoreLines(await answering(runner, 'cannot be read', load));
  }

  async setIgnores(folder: string, read: () => string[]): Promise<IgnoreLines> {
    const runner = this.#running(folder, 'cannot be scanned');
    const lines = read();
    const ignores = await answering(runner, 'cannot be written', async () => {
      const parsed = await refusedIgnores(() => Ignores.parse(lines, runner.path));
      await writeFileAtomic(
        join(runner.path, IGNORE_FILE),
        lines.length === 0 ? '' : `${lines.join('\n')}\n`,
        0o644,
      );
      return parsed;
    });
    // What the folder holds changed with the patterns: it is scanned whole.
    if (!runner.config.paused) await runner.scan();
    return ignoreLines(ignores);
  }

  async ignoresPreview(folder: string, read: () => string[]): Promise<IgnorePreview> {
    const runner = this.#running(folder, 'cannot be read');
    const lines = read();
    // Read as the scan reads them (an #include from the folder's root), and walked as it walks.
    return answering(runner, 'cannot be read', async () => {
      const ignores = await refusedIgnores(() => Ignores.parse(lines, runner.path));
      return previewIgnores(runner.path, ignores, { markerName: runner.config.markerName });
    });
  }

  folderErrors(folder: string, page: Page) {
    const runner = this.#parts.folders?.get(folder);
    return pageOf(runner?.problems ?? [], page).map((problem) => ({
      path: problem.name,
      error: problem.error,
    }));
  }

  folderStats(folders: readonly string[]): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const id of folders) {
      const runner = this.#parts.folders?.get(id);
      if (runner) out[id] = runner.stats;
    }
    return out;
  }

  async versions(folder: string): Promise<Record<string, Version[]>> {
    const { runner, versioner } = this.#versioned(folder);
    if (versioner.type === 'external') throw restoreUnsupported('get versions');
    return answering(runner, 'cannot list its versions', () => versioner.versions());
  }

  async restoreVersions(
    folder: string,
    wanted: () => ReadonlyArray<[string, Date]>,
  ): Promise<Record<string, string>> {
    const { runner, versioner } = this.#versioned(folder);
    if (versioner.type === 'external') throw restoreUnsupported('restore');
    const failures: Record<string, string> = {};
    const restored: string[] = [];
    const asked = wanted();
    await answering(runner, 'cannot restore', async () => {
      for (const [name, versionTime] of asked) {
        try {
          await versioner.restore(name, versionTime);
          restored.push(name);
        } catch (error) {
          failures[name] = (error as Error).message;
        }
      }
    });
    // What was restored is scanned, so that the other devices get it.
    if (restored.length > 0) void runner.scan(restored);
    return failures;
  }

  connections(): ReadonlyMap<string, ConnectedDevice> {
    const out = new Map<string, ConnectedDevice>();
    for (const [device, connection] of this.#parts.connections.connections) {
      out.set(device, {
        inBytes: connection.session.inBytes,
        outBytes: connection.session.outBytes,
        startedAt: connection.startedAt,
        address: connection.address,
        clientVersion: shownVersion(connection),
        type: connection.type,
        crypto: connection.crypto,
      });
    }
    return out;
  }

  traffic(): ReadonlyMap<string, { inBytes: number; outBytes: number }> {
    return this.#parts.connections.traffic();
  }

  lastDialStatus(): Record<string, unknown> {
    return this.#parts.connections.lastDialStatus;
  }

  relayStatus(): Record<string, unknown> {
    return this.#parts.relays.status();
  }

  deviceStats(): Record<string, unknown> {
    return this.#parts.connections.deviceStats();
  }

  pendingDevices() {
    return this.#parts.connections.pendingDevices();
  }

  dismissPendingDevice(device: string): void {
    this.#parts.connections.dismissPending(device);
  }

  pendingFolders(device?: string): Record<string, unknown> {
    return this.#parts.connections.pendingFolders.list(device);
  }

  dismissPendingFolder(folder: string, device?: string): void {
    this.#parts.connections.pendingFolders.dismiss(folder, device);
  }

  discoveryStatus(): Record<string, unknown> {
    return this.#parts.discovery.status();
  }

  discoveryCache(): Record<string, unknown> {
    return this.#parts.discovery.cache.snapshot();
  }

  hintAddress(device: string, url: string): void {
    this.#parts.discovery.hint(device, url);
  }

  /** The folder's runner, or why there is none (an index that cannot be used, a folder starting). */
  #running(folder: string, doing: string): FolderRunner {
    const runner = this.#parts.folders?.get(folder);
    if (!runner) throw notRunning(folder, doing, this.#parts.indexError);
    return runner;
  }

  async #ofType(
    folder: string,
    type: string,
    path: string,
    run: (runner: FolderRunner) => Promise<void>,
  ): Promise<void> {
    const runner = this.#running(folder, 'cannot be scanned');
    if (runner.config.type !== type) {
      throw new ModelError(
        'folder-type',
        `folder ${folder} is ${runner.config.type}: ${path} applies to ${type} folders only`,
      );
    }
    if (runner.config.paused) throw paused(folder, 'resume it first');
    await answering(runner, 'cannot be changed', () => run(runner));
  }

  #versioned(folder: string): { runner: FolderRunner; versioner: Versioner } {
    if (this.#parts.config.current.folders.find((candidate) => candidate.id === folder)?.paused) {
      throw new ModelError('folder-paused', `folder ${folder} is paused`);
    }
    const runner = this.#running(folder, 'is not running');
    const { versioner } = runner;
    if (!versioner) {
      throw new ModelError('no-versioning', `folder ${folder} has no versioner: set its versioning first`);
    }
    return { runner, versioner };
  }
}

function paused(folder: string, fix: string): ModelError {
  return new ModelError('folder-paused', `folder ${folder} is paused; ${fix}`);
}

// An operation on a folder's files for a request: answered with the folder's error once its
// filesystem does not answer (see FolderRunner.answering), instead of waiting on a dead mount.
async function answering<T>(runner: FolderRunner, doing: string, operation: () => Promise<T>): Promise<T> {
  return runner.answering(operation).catch((error: unknown) => {
    throw error instanceof NotAnsweringError ? notRunning(runner.id, doing, error.message) : error;
  });
}

function notRunning(folder: string, doing: string, why: string | undefined): ModelError {
  return new ModelError('folder-not-running', `folder ${folder} ${doing}: ${why ?? 'it is starting'}`);
}

function restoreUnsupported(operation: string): ModelError {
  return new ModelError(
    'no-versioning',
    `external versioner: ${operation}: version restoration not supported with the current versioner`,
  );
}

/** Patterns that cannot be used, as the model refuses them. */
async function refusedIgnores(read: () => Promise<Ignores>): Promise<Ignores> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof IgnoreError) throw new ModelError('invalid-ignores', error.message);
    throw error;
  }
}

function ignoreLines(ignores: Ignores): IgnoreLines {
  return { ignore: ignores.lines, expanded: ignores.lines ? ignores.expanded : null };
}

function pageOf<T>(items: readonly T[], { page, perpage }: Page): T[] {
  return items.slice((page - 1) * perpage, page * perpage);
}

// GET /rest/db/browse: the tree below `prefix`, `levels` deep (-1: all), as Syncthing nests it.
function browse(db: IndexDb, folder: string, prefix: string, levels: number, dirsOnly: boolean): TreeEntry[] {
  const root: TreeEntry[] = [];
  const directories = new Map<string, TreeEntry[]>([['', root]]);
  const start = prefix === '' ? '' : `${prefix}/`;
  for (const record of db.iterate(folder)) {
    if (record.deleted || record.invalid || !record.name.startsWith(start)) continue;
    const name = record.name.slice(start.length);
    const depth = name.split('/').length - 1;
    if (levels > -1 && depth > levels) continue;
    const slash = name.lastIndexOf('/');
    const parent = directories.get(slash < 0 ? '' : name.slice(0, slash));
    if (!parent || (dirsOnly && record.type !== 'directory')) continue;
    const entry: TreeEntry = {
      name: slash < 0 ? name : name.slice(slash + 1),
      modTime: modifiedTime(record),
      size: record.type === 'file' ? record.size : SYNTHETIC_SIZE,
      type: REST_TYPE_NAMES[record.type],
    };
    if (record.type === 'directory') {
      entry.children = [];
      directories.set(name, entry.children);
    }
    parent.push(entry);
  }
  // Syncthing leaves out an empty list of children.
  for (const children of directories.values())
    for (const entry of children) if (entry.children?.length === 0) delete entry.children;
  return root;
}
