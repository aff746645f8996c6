import type { Configuration } from '../../shared/config/defaults.ts';
import type { EventLog } from '../events/event-log.ts';
import type { ConfigListener } from './worker-config.ts';

/** The events a saved configuration makes, as Syncthing logs them: ConfigSaved, then what was paused. */
export function configEvents(events: EventLog): ConfigListener {
  return (from: Configuration, to: Configuration) => {
    events.log('ConfigSaved', to);
    const wasPaused = new Map(from.devices.map((device) => [device.deviceID, device.paused]));
    for (const device of to.devices) {
      const before = wasPaused.get(device.deviceID);
      if (before === undefined || before === device.paused) continue;
      events.log(device.paused ? 'DevicePaused' : 'DeviceResumed', { device: device.deviceID });
    }
    const folderWasPaused = new Map(from.folders.map((folder) => [folder.id, folder.paused]));
    for (const folder of to.folders) {
      const before = folderWasPaused.get(folder.id);
      if (before === undefined || before === folder.paused) continue;
      events.log(folder.paused ? 'FolderPaused' : 'FolderResumed', { id: folder.id, label: folder.label });
    }
  };
}
