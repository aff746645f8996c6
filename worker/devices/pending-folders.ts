import type { Configuration } from '../../shared/config/defaults.ts';
import type { Logger } from '../../shared/logger.ts';
import type { EventLog } from '../events/event-log.ts';
import type { PendingFolder } from '../index-db/index-db.ts';
import { encryptedFor, folderDescription, foldersSharedWith, type OfferedFolder } from './cluster-config.ts';
import type { DeviceStore } from './device-store.ts';

/** Folders kept as pending at most, from one device and in all (Syncthing keeps every one). */
export const MAX_PER_DEVICE = 1000;
export const MAX_PENDING = 10_000;

/** By folder, the devices offering it and what each said of it. */
type PendingFolderList = Record<
  string,
  { offeredBy: Record<string, Omit<PendingFolder, 'folder' | 'device'>> }
>;

/**
 * The folders devices offer that are not shared with them here, as Syncthing keeps them for the user
 * (model.go ccHandleFolders): recorded from each ClusterConfig, gone when the device stops offering
 * them, when the folder becomes shared with it or is ignored, or when the user dismisses them.
 * PendingFoldersChanged tells each change.
 */
export class PendingFolders {
  readonly #store: DeviceStore;
  readonly #events: EventLog;
  readonly #myId: string;
  readonly #logger: Logger | undefined;

  constructor(options: { store: DeviceStore; events: EventLog; myId: string; logger?: Logger }) {
    this.#store = options.store;
    this.#events = options.events;
    this.#myId = options.myId;
    this.#logger = options.logger;
  }

  /** What Syncthing's GET /rest/cluster/pending/folders answers: by folder, the devices offering it. */
  list(device?: string): PendingFolderList {
    const out: PendingFolderList = {};
    for (const { folder, device: by, ...observed } of this.#store.pendingFolders()) {
      if (device !== undefined && by !== device) continue;
      (out[folder] ??= { offeredBy: {} }).offeredBy[by] = observed;
    }
    return out;
  }

  /**
   * A device's ClusterConfig: what it offers and is not shared with it here is pending; what it no
   * longer offers is not. At most MAX_PER_DEVICE folders of a device, and MAX_PENDING in all, are kept.
   */
  offered(device: string, folders: readonly OfferedFolder[], config: Configuration): void {
    const shared = foldersSharedWith(config, device);
    const ignored = new Set(
      config.devices.find((d) => d.deviceID === device)?.ignoredFolders.map((folder) => folder.id) ?? [],
    );
    const pending = this.#store.pendingFolders();
    const expired = new Set(pending.filter((p) => p.device === device).map((p) => p.folder));
    let room = MAX_PENDING - (pending.length - expired.size);
    // Syncthing's times here are whole seconds.
    const time = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    const added = [];
    const entries: PendingFolder[] = [];
    for (const folder of folders) {
      if (shared.has(folder.id) || ignored.has(folder.id)) continue;
      if (entries.length >= MAX_PER_DEVICE || room <= 0) break;
      room -= 1;
      expired.delete(folder.id);
      const entry = {
        folder: folder.id,
        device,
        time,
        label: folder.label,
        receiveEncrypted: encryptedFor(folder, this.#myId),
        remoteEncrypted: encryptedFor(folder, device),
      };
      entries.push(entry);
      added.push({
        folderID: entry.folder,
        folderLabel: entry.label,
        deviceID: device,
        receiveEncrypted: entry.receiveEncrypted,
        remoteEncrypted: entry.remoteEncrypted,
      });
      // Syncthing's deprecated event, still logged beside the new one.
      this.#events.log('FolderRejected', { folder: folder.id, folderLabel: folder.label, device });
      // A new offer is said once, as Syncthing says it (model.go ccHandleFolders), with what to do.
      if (!pending.some((known) => known.device === device && known.folder === folder.id)) {
        this.#logger?.info(
          { device, folder: folder.id },
          `unexpected folder ${folderDescription(folder)} sent from device ${device}: it is not shared with that device here; accept it by adding it (POST /rest/config/folders, shared with the device), or dismiss it (DELETE /rest/cluster/pending/folders?folder=${folder.id}&device=${device})`,
        );
      }
    }
    this.#store.putPendingFolders(entries);
    const removed = [...expired]
      .filter((folder) => this.#store.dropPendingFolder(folder, device))
      .map((folder) => ({ folderID: folder, deviceID: device }));
    if (added.length > 0 || removed.length > 0) this.#events.log('PendingFoldersChanged', { added, removed });
  }

  /** Dismissed by the user: a folder from one device, or from every device offering it. */
  dismiss(folder: string, device?: string): void {
    const dropped = this.#store
      .pendingFolders()
      .filter((p) => p.folder === folder && (device === undefined || p.device === device))
      .filter((p) => this.#store.dropPendingFolder(p.folder, p.device));
    if (dropped.length === 0) return;
    const removed = device === undefined ? [{ folderID: folder }] : [{ folderID: folder, deviceID: device }];
    this.#events.log('PendingFoldersChanged', { removed });
  }

  /** A new configuration: offers from devices no longer configured, ignored now, or now shared, go. */
  configured(config: Configuration): void {
    const devices = new Map(config.devices.map((device) => [device.deviceID, device]));
    const removed = [];
    for (const { folder, device } of this.#store.pendingFolders()) {
      const known = devices.get(device);
      const gone =
        !known ||
        known.ignoredFolders.some((ignored) => ignored.id === folder) ||
        foldersSharedWith(config, device).has(folder);
      if (gone && this.#store.dropPendingFolder(folder, device))
        removed.push({ folderID: folder, deviceID: device });
    }
    if (removed.length > 0) this.#events.log('PendingFoldersChanged', { removed });
  }
}
