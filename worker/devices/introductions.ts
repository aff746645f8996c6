import { isDeviceAddress } from '../../shared/config/decode.ts';
import type { Configuration, DeviceConfiguration } from '../../shared/config/defaults.ts';
import { deviceIdFromRaw } from '../../shared/device-id.ts';
import { folderDescription, type OfferedFolder } from './cluster-config.ts';

/** Devices added from one introducer's ClusterConfig at most, and configured in all past which none is. */
export const MAX_INTRODUCED = 100;
export const MAX_DEVICES = 1000;
/** Folder shares added from one ClusterConfig at most. */
export const MAX_SHARES = 1000;

type OfferedDevice = OfferedFolder['devices'][number];

/**
 * Syncthing's introducer (lib/model/model.go handleIntroductions, handleDeintroductions), as an edit
 * of the configuration for a ClusterConfig from `introducer`: for each folder it offers that is
 * shared with it here, the devices it lists are added (unknown ones from its word: name, addresses,
 * certificate name; compression as the introducer's) and the folder shared with them, each marked
 * introducedBy; then, unless the introducer has skipIntroductionRemovals, the shares it introduced
 * that it no longer lists go, and the devices it introduced that it lists in no folder (unless shared
 * here otherwise). Unlike Syncthing 1.19, which takes any folder it has, a folder not shared with the
 * introducer is left alone: knowing a folder's ID is not enough to be given it. Returns Syncthing's log
 * lines; nothing is changed for a device that is not an introducer.
 */
export function introduceFrom(
  draft: Configuration,
  introducer: string,
  offered: readonly OfferedFolder[],
  myId: string,
): string[] {
  const said: string[] = [];
  const from = draft.devices.find((device) => device.deviceID === introducer);
  if (!from?.introducer) return said;
  // By device, the folders the introducer lists it in (Syncthing's folderDeviceSet).
  const listed = new Map<string, Set<string>>();
  const devices = new Set(draft.devices.map((device) => device.deviceID));
  const folders = new Map(draft.folders.map((folder) => [folder.id, folder]));
  let [added, shares, bounded] = [0, 0, false];
  for (const folder of offered) {
    const mine = folders.get(folder.id);
    if (!mine?.devices.some((shared) => shared.deviceID === introducer)) continue;
    for (const entry of folder.devices) {
      const id = deviceIdFromRaw(entry.id);
      if (id === myId) continue;
      let inFolders = listed.get(id);
      if (!inFolders) listed.set(id, (inFolders = new Set()));
      inFolders.add(folder.id);
      if (!devices.has(id)) {
        if (added >= MAX_INTRODUCED || devices.size >= MAX_DEVICES) {
          bounded = true;
          continue;
        }
        said.push(`Adding device ${id} to config (vouched for by introducer ${introducer})`);
        if (entry.introducer) said.push(`Device ${id} is now also an introducer`);
        draft.devices.push(introducedDevice(draft, entry, id, from));
        devices.add(id);
        added += 1;
      } else if (mine.devices.some((shared) => shared.deviceID === id)) continue;
      if (entry.encryptionPasswordToken.length > 0) {
        said.push(
          `Cannot share folder ${folderDescription(folder)} with ${id} because the introducer ${introducer} encrypts data, which requires a password`,
        );
        continue;
      }
      if (shares >= MAX_SHARES) {
        bounded = true;
        continue;
      }
      said.push(
        `Sharing folder ${folderDescription(folder)} with ${id} (vouched for by introducer ${introducer})`,
      );
      mine.devices.push({ deviceID: id, introducedBy: introducer, encryptionPassword: '' });
      shares += 1;
    }
  }
  if (bounded) {
    said.push(
      `Not everything introducer ${introducer} vouches for was added: at most ${MAX_INTRODUCED} devices and ${MAX_SHARES} shares from one ClusterConfig, and ${MAX_DEVICES} devices in all`,
    );
  }
  if (!from.skipIntroductionRemovals) said.push(...deintroduce(draft, introducer, listed));
  return said;
}

// Syncthing's introduceDevice: a new device from the defaults, on the introducer's word.
function introducedDevice(
  draft: Configuration,
  entry: OfferedDevice,
  id: string,
  from: DeviceConfiguration,
): DeviceConfiguration {
  const made = structuredClone(draft.defaults.device);
  made.deviceID = id;
  made.name = entry.name;
  made.compression = from.compression;
  // What the configuration could not hold (an address of no protocol syncd knows) is left out.
  made.addresses = ['dynamic', ...entry.addresses.filter((a) => a !== 'dynamic' && isDeviceAddress(a))];
  made.certName = entry.certName;
  made.introducedBy = from.deviceID;
  // The introducers' introducers are also ours.
  if (entry.introducer) {
    made.introducer = true;
    made.skipIntroductionRemovals = entry.skipIntroductionRemovals;
  }
  return made;
}

// The shares the introducer made and no longer lists go, then the devices it made that it lists
// nowhere, unless a share of theirs is not its doing.
function deintroduce(draft: Configuration, introducer: string, listed: Map<string, Set<string>>): string[] {
  const said: string[] = [];
  const notIntroduced = new Set<string>();
  for (const folder of draft.folders) {
    folder.devices = folder.devices.filter((shared) => {
      if (shared.introducedBy !== introducer) {
        notIntroduced.add(shared.deviceID);
        return true;
      }
      if (listed.get(shared.deviceID)?.has(folder.id)) return true;
      said.push(
        `Unsharing folder ${folderDescription(folder)} with ${shared.deviceID} as introducer ${introducer} no longer shares the folder with that device`,
      );
      return false;
    });
  }
  const removed = new Set<string>();
  draft.devices = draft.devices.filter((device) => {
    if (device.introducedBy !== introducer || listed.has(device.deviceID)) return true;
    if (notIntroduced.has(device.deviceID)) {
      said.push(
        `Would have removed ${device.deviceID} as ${introducer} no longer shares any folders, yet there are other folders that are shared with this device that haven't been introduced by this introducer.`,
      );
      return true;
    }
    said.push(
      `Removing device ${device.deviceID} as introducer ${introducer} no longer shares any folders with that device`,
    );
    removed.add(device.deviceID);
    return false;
  });
  // Nothing else may name a device that is gone (the new folders' defaults may).
  const defaults = draft.defaults.folder;
  defaults.devices = defaults.devices.filter((shared) => !removed.has(shared.deviceID));
  return said;
}
