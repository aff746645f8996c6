import type { SyncdClient } from '../../shared/client/client.ts';
import type { DeviceConfiguration, FolderConfiguration } from '../../shared/config/defaults.ts';
import { deviceIdProblem } from '../../shared/device-id.ts';
import { listDevices } from './device-list.ts';
import { listFolders } from './folder-list.ts';
import { counted } from './traffic.ts';
import type { Print } from './format.ts';

/** A mistake in how the command was called: exit code 2 (see run.ts). */
export class ConfigUsageError extends Error {}

/** A change the command will not make as asked (it would undo another): exit code 1. */
export class ConfigRefusal extends Error {}

export interface ConfigCommandOptions {
  name?: string;
  deviceAddress?: string[];
  label?: string;
  type?: string;
  share?: string[];
  /** Replace a folder or device configured already (Syncthing's POST does so silently). */
  replace?: boolean;
}

/** `syncd devices [add ID | remove ID | pause [ID] | resume [ID]]`. */
export async function devicesCommand(
  client: SyncdClient,
  args: string[],
  options: ConfigCommandOptions,
  print: Print,
): Promise<void> {
  const [sub, id, ...rest] = args;
  if (rest.length > 0) throw new ConfigUsageError(`devices ${sub}: unexpected "${rest.join(' ')}"`);
  const myID = (await client.status()).myID;
  switch (sub) {
    case undefined:
      await listDevices(client, myID, print);
      return;
    case 'add': {
      const deviceID = needId(sub, id, 'a device ID');
      const device: Partial<DeviceConfiguration> & { deviceID: string } = { deviceID };
      if (options.name !== undefined) device.name = options.name;
      if (options.deviceAddress !== undefined) device.addresses = options.deviceAddress;
      const known = (await client.devices()).find((entry) => entry.deviceID === deviceID);
      if (known && !options.replace) {
        throw new ConfigRefusal(
          `device ${deviceID} is configured already${known.name ? ` (${known.name})` : ''}: give --replace to replace its configuration (its folders stay shared with it)`,
        );
      }
      await client.addDevice(device);
      const done = known ? 'replaced' : 'added';
      print({ ok: done, deviceID }, `device ${deviceID} ${done}`);
      return;
    }
    case 'remove':
      await client.removeDevice(needId(sub, id, 'a device ID'));
      print({ ok: 'removed', deviceID: id }, `device ${id} removed`);
      return;
    case 'pause':
    case 'resume': {
      // Syncthing answers 200 and does nothing: a person is told.
      if (id === myID) throw new ConfigRefusal(`device ${id} is this device: it cannot be ${sub}d`);
      await (sub === 'pause' ? client.pause(id) : client.resume(id));
      const which = id === undefined ? 'every device' : `device ${id}`;
      print({ ok: sub === 'pause' ? 'paused' : 'resumed', deviceID: id ?? null }, `${which} ${sub}d`);
      return;
    }
    default:
      throw new ConfigUsageError(`devices takes nothing, add, remove, pause or resume, not "${sub}"`);
  }
}

/** `syncd folders [add | edit | share | unshare | override | revert | pause | resume | remove]`. */
export async function foldersCommand(
  client: SyncdClient,
  args: string[],
  options: ConfigCommandOptions,
  print: Print,
): Promise<void> {
  const [sub, id, path, ...rest] = args;
  if (sub === 'share' || sub === 'unshare') {
    await shareCommand(client, sub, needId(sub, id, 'a folder ID'), args.slice(2), print);
    return;
  }
  if (rest.length > 0 || (path !== undefined && sub !== 'add')) {
    throw new ConfigUsageError(`folders ${sub}: unexpected "${args.slice(sub === 'add' ? 3 : 2).join(' ')}"`);
  }
  switch (sub) {
    case undefined:
      await listFolders(client, print);
      return;
    case 'add': {
      const folderId = needId(sub, id, 'a folder ID');
      if (path === undefined)
        throw new ConfigUsageError('folders add needs the ID and the PATH of the folder');
      const folder: Partial<FolderConfiguration> & { id: string; path: string } = { id: folderId, path };
      if (options.label !== undefined) folder.label = options.label;
      if (options.type !== undefined) folder.type = options.type;
      if (options.share !== undefined) {
        folder.devices = options.share.map((deviceID) => ({
          deviceID,
          introducedBy: '',
          encryptionPassword: '',
        }));
      }
      const known = (await client.folders()).find((entry) => entry.id === folderId);
      if (known && !options.replace) {
        throw new ConfigRefusal(
          `folder ${folderId} is configured already, at ${known.path}: give --replace to replace its whole configuration (type, sharing and the rest back to what this command says)`,
        );
      }
      await client.addFolder(folder);
      const done = known ? 'replaced' : 'added';
      print({ ok: done, id: folderId }, `folder ${folderId} ${done} at ${path}`);
      return;
    }
    case 'remove':
      await client.removeFolder(needId(sub, id, 'a folder ID'));
      print({ ok: 'removed', id }, `folder ${id} removed`);
      return;
    case 'pause':
    case 'resume':
      await client.changeFolder(needId(sub, id, 'a folder ID'), { paused: sub === 'pause' });
      print({ ok: sub === 'pause' ? 'paused' : 'resumed', id }, `folder ${id} ${sub}d`);
      return;
    case 'edit': {
      const folderId = needId(sub, id, 'a folder ID');
      const change: Partial<FolderConfiguration> = {};
      if (options.label !== undefined) change.label = options.label;
      if (options.type !== undefined) change.type = options.type;
      if (Object.keys(change).length === 0)
        throw new ConfigUsageError('folders edit needs --label or --type: what to change');
      await client.changeFolder(folderId, change);
      print({ ok: 'changed', id: folderId, ...change }, `folder ${folderId} changed: ${describe(change)}`);
      return;
    }
    case 'override':
    case 'revert': {
      const folderId = needId(sub, id, 'a folder ID');
      const folder = (await client.folders()).find((entry) => entry.id === folderId);
      const wanted = sub === 'override' ? 'sendonly' : 'receiveonly';
      // Syncthing answers 200 and does nothing for a folder of another type: a person is told.
      if (folder && folder.type !== wanted) {
        throw new ConfigRefusal(
          `folder ${folderId} is ${folder.type}: ${sub} is for ${wanted} folders (${sub === 'override' ? 'it makes their versions win over the changes of others' : 'it undoes their local changes'})`,
        );
      }
      await (sub === 'override' ? client.override(folderId) : client.revert(folderId));
      print(
        { ok: sub === 'override' ? 'overridden' : 'reverted', id: folderId },
        sub === 'override'
          ? `folder ${folderId} overridden: its versions are the global ones again`
          : `folder ${folderId} reverted: its local changes are undone`,
      );
      return;
    }
    default:
      throw new ConfigUsageError(
        `folders takes nothing, add, edit, share, unshare, override, revert, pause, resume or remove, not "${sub}"`,
      );
  }
}

function needId(sub: string, id: string | undefined, what: string): string {
  if (id === undefined || id === '') throw new ConfigUsageError(`${sub} needs ${what}`);
  return id;
}

function describe(change: Partial<FolderConfiguration>): string {
  return Object.entries(change)
    .map(([field, value]) => `${field} ${JSON.stringify(value)}`)
    .join(', ');
}

/** `folders share ID DEVICE...` and `folders unshare ID DEVICE...`: the folder's device list changed. */
async function shareCommand(
  client: SyncdClient,
  sub: 'share' | 'unshare',
  id: string,
  deviceIds: string[],
  print: Print,
): Promise<void> {
  if (deviceIds.length === 0) throw new ConfigUsageError(`folders ${sub} needs the folder ID and DEVICE IDs`);
  const folder = (await client.folders()).find((entry) => entry.id === id);
  if (!folder) throw new ConfigRefusal(`no folder with ID "${id}": syncd folders lists them`);
  const shared = new Set(folder.devices.map((device) => device.deviceID));
  const myID = (await client.status()).myID;
  let devices = folder.devices;
  const malformed = deviceIds.find((device) => deviceIdProblem(device) !== undefined);
  if (malformed !== undefined)
    throw new ConfigUsageError(`"${malformed}" is not a device ID: ${deviceIdProblem(malformed)}`);
  if (sub === 'share') {
    const known = new Set((await client.devices()).map((device) => device.deviceID));
    const unknown = deviceIds.filter((device) => !known.has(device));
    if (unknown.length > 0) {
      throw new ConfigRefusal(
        `${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not configured: syncd devices add ID first`,
      );
    }
    devices = [
      ...devices,
      ...deviceIds
        .filter((device) => !shared.has(device))
        .map((deviceID) => ({ deviceID, introducedBy: '', encryptionPassword: '' })),
    ];
  } else {
    if (deviceIds.includes(myID)) throw new ConfigRefusal('a folder stays shared with this device');
    const strangers = deviceIds.filter((device) => !shared.has(device));
    if (strangers.length > 0)
      throw new ConfigRefusal(`folder ${id} is not shared with ${strangers.join(', ')}`);
    devices = devices.filter((device) => !deviceIds.includes(device.deviceID));
  }
  await client.changeFolder(id, { devices });
  const others = devices.filter((device) => device.deviceID !== myID).length;
  print(
    { ok: sub === 'share' ? 'shared' : 'unshared', id, devices: devices.map((device) => device.deviceID) },
    `folder ${id} ${sub === 'share' ? 'shared with' : 'no longer shared with'} ${deviceIds.join(', ')}; now with ${counted(others, 'device')}`,
  );
}
