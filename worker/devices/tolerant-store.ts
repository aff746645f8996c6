import type { Logger } from '../../shared/logger.ts';
import type { DeviceStore } from './device-store.ts';

/**
 * A device store whose writes may fail (the home's disk full) without taking the worker with them:
 * what devices did is bookkeeping (when each was last seen, what it offered), so a write that fails is
 * logged and the connection goes on; the next write that can be made records the state again.
 */
export function tolerantStore(store: DeviceStore, logger: Logger): DeviceStore {
  const attempt = <T>(what: string, write: () => T, otherwise: T): T => {
    try {
      return write();
    } catch (error) {
      logger.warn(
        { err: error, slot: 'device-store' },
        `could not record ${what}: ${(error as Error).message}; it is recorded again at the next change`,
      );
      return otherwise;
    }
  };
  return {
    pendingDevices: () => store.pendingDevices(),
    deviceStats: () => store.deviceStats(),
    pendingFolders: () => store.pendingFolders(),
    addPendingDevice: (device) => attempt('a pending device', () => store.addPendingDevice(device), false),
    dropPendingDevice: (device) =>
      attempt('a pending device gone', () => store.dropPendingDevice(device), false),
    setDeviceStats: (device, stats) =>
      attempt('when a device was last seen', () => store.setDeviceStats(device, stats), undefined),
    putPendingFolders: (entries) =>
      attempt('the folders devices offer', () => store.putPendingFolders(entries), undefined),
    dropPendingFolder: (folder, device) =>
      attempt('a pending folder gone', () => store.dropPendingFolder(folder, device), false),
  };
}
