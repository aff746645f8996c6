import type { DeviceConnection, FolderStatus, SyncdClient } from '../../shared/client/client.ts';
import type { DeviceConfiguration, FolderConfiguration } from '../../shared/config/defaults.ts';

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

type Print = (json: unknown, text: string) => void;

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
    case undefined: {
      const devices = await client.devices();
      // What is connected, and who is knocking: shown when the service holds them (not mid-restart).
      const [{ connections }, pending] = await Promise.all([
        client.connections(),
        client.pendingDevices().catch(() => ({})),
      ]);
      print(devices, devicesTable(devices, myID, connections, pending));
      return;
    }
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
      await (sub === 'pause' ? client.pause(id) : client.resume(id));
      const which = id === undefined ? 'every device' : `device ${id}`;
      print({ ok: sub === 'pause' ? 'paused' : 'resumed', deviceID: id ?? null }, `${which} ${sub}d`);
      return;
    }
    default:
      throw new ConfigUsageError(`devices takes nothing, add, remove, pause or resume, not "${sub}"`);
  }
}

/** `syncd folders [add ID PATH | remove ID | pause ID | resume ID]`. */
export async function foldersCommand(
  client: SyncdClient,
  args: string[],
  options: ConfigCommandOptions,
  print: Print,
): Promise<void> {
  const [sub, id, path, ...rest] = args;
  if (rest.length > 0 || (path !== undefined && sub !== 'add')) {
    throw new ConfigUsageError(`folders ${sub}: unexpected "${args.slice(sub === 'add' ? 3 : 2).join(' ')}"`);
  }
  switch (sub) {
    case undefined: {
      const folders = await client.folders();
      // The state of each: unknown for the moment the index changes hands between workers.
      const statuses = await Promise.all(
        folders.map((folder) => client.folderStatus(folder.id).catch(() => undefined)),
      );
      print(
        folders.map((folder, i) => ({ ...folder, status: statuses[i] ?? null })),
        foldersTable(folders, statuses),
      );
      return;
    }
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
    default:
      throw new ConfigUsageError(`folders takes nothing, add, remove, pause or resume, not "${sub}"`);
  }
}

function needId(sub: string, id: string | undefined, what: string): string {
  if (id === undefined || id === '') throw new ConfigUsageError(`${sub} needs ${what}`);
  return id;
}

function devicesTable(
  devices: DeviceConfiguration[],
  myID: string,
  connections: Record<string, DeviceConnection>,
  pending: Record<string, { name: string; address: string }>,
): string {
  if (devices.length === 0) return 'no devices';
  const lines = devices.map((device) => {
    const connection = connections[device.deviceID];
    const state =
      device.deviceID === myID
        ? 'this device'
        : device.paused
          ? 'paused'
          : connection?.connected
            ? `connected at ${connection.address}, ${connection.clientVersion}`
            : 'not connected';
    return `${device.deviceID}  ${device.name || '(no name)'}  ${device.addresses.join(' ')}  (${state})`;
  });
  for (const [id, { name, address }] of Object.entries(pending)) {
    lines.push(
      `${id}  ${name || '(no name)'}  (pending: connected from ${address}, not configured; add it to accept it)`,
    );
  }
  return lines.join('\n');
}

function foldersTable(folders: FolderConfiguration[], statuses: Array<FolderStatus | undefined>): string {
  if (folders.length === 0) return 'no folders';
  return folders
    .map((folder, i) => {
      const status = statuses[i];
      const state = status
        ? `${status.state}${status.error ? ` (${status.error})` : ''}, ${status.localFiles} files, ${status.localDirectories} directories, ${bytes(status.localBytes)}${status.errors > 0 ? `, ${status.errors} errors` : ''}`
        : 'state unknown';
      return `${folder.id}  ${folder.path}  ${folder.type}  shared with ${folder.devices.length - 1} device(s)  ${state}`;
    })
    .join('\n');
}

function bytes(count: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = count;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}
