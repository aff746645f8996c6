import type { DeviceStats, PendingDevice, PendingFolder } from '../index-db/index-db.ts';

/** What is kept of devices (pending ones, when each was last seen): the index database, while the service holds it. */
export interface DeviceStore {
  pendingDevices(): PendingDevice[];
  addPendingDevice(device: PendingDevice): boolean;
  dropPendingDevice(device: string): boolean;
  deviceStats(): Map<string, DeviceStats>;
  setDeviceStats(device: string, stats: DeviceStats): void;
  pendingFolders(): PendingFolder[];
  putPendingFolders(entries: readonly PendingFolder[]): void;
  dropPendingFolder(folder: string, device: string): boolean;
}

/** What is kept of devices, in memory, when the index database cannot be used. */
export function memoryDeviceStore(): DeviceStore {
  const pending = new Map<string, PendingDevice>();
  const stats = new Map<string, DeviceStats>();
  const folders = new Map<string, PendingFolder>();
  const key = (folder: string, device: string) => JSON.stringify([folder, device]);
  return {
    pendingFolders: () =>
      [...folders.values()].sort(
        (a, b) => a.folder.localeCompare(b.folder) || a.device.localeCompare(b.device),
      ),
    putPendingFolders: (entries) => {
      for (const entry of entries) folders.set(key(entry.folder, entry.device), entry);
    },
    dropPendingFolder: (folder, device) => folders.delete(key(folder, device)),
    pendingDevices: () => [...pending.values()].sort((a, b) => a.device.localeCompare(b.device)),
    addPendingDevice: (device) => {
      const added = !pending.has(device.device);
      pending.set(device.device, device);
      return added;
    },
    dropPendingDevice: (device) => pending.delete(device),
    deviceStats: () => new Map(stats),
    setDeviceStats: (device, entry) => void stats.set(device, entry),
  };
}
