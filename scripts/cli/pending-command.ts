import { isAbsolute, join } from 'node:path';
import type { PendingFolder, SyncdClient } from '../../shared/client/client.ts';
import type { FolderConfiguration } from '../../shared/config/defaults.ts';
import { ConfigRefusal, ConfigUsageError } from './config-commands.ts';
import { localTime, type Print } from './format.ts';
import { isOneName, sanitizePath } from '../../shared/sanitize-path.ts';
import { safeLine } from '../../shared/terminal-text.ts';

export interface PendingOptions {
  name?: string;
  type?: string;
}

/** `syncd pending [accept ID [PATH] | dismiss ID [DEVICE]]`: what other devices offer. */
export async function pendingCommand(
  client: SyncdClient,
  args: string[],
  options: PendingOptions,
  print: Print,
): Promise<void> {
  const [sub, id, extra, ...rest] = args;
  if (rest.length > 0) throw new ConfigUsageError(`pending ${sub}: unexpected "${rest.join(' ')}"`);
  const [devices, folders] = await Promise.all([client.pendingDevices(), client.pendingFolders()]);
  if (sub === undefined) {
    print({ devices, folders }, pendingTable(devices, folders));
    return;
  }
  if (sub !== 'accept' && sub !== 'dismiss')
    throw new ConfigUsageError(`pending takes nothing, accept or dismiss, not "${sub}"`);
  if (id === undefined || id === '')
    throw new ConfigUsageError(`pending ${sub} needs the ID of a pending device or folder`);
  const device = devices[id];
  const folder = folders[id];
  if (device && (extra !== undefined || options.type !== undefined)) {
    throw new ConfigUsageError(`pending ${sub} ${id}: a device takes no PATH or --type`);
  }
  if (!device && !folder) {
    throw new ConfigRefusal(
      `nothing pending has the ID "${id}": syncd pending lists the devices and folders offered (a device is listed while it keeps connecting, a folder while a device offers it)`,
    );
  }
  if (sub === 'dismiss') {
    if (device) await client.dismissPendingDevice(id);
    else await client.dismissPendingFolder(id, extra);
    const whose = extra === undefined ? '' : ` by ${extra}`;
    print(
      { ok: 'dismissed', id, ...(extra === undefined ? {} : { device: extra }) },
      device
        ? `device ${id} dismissed until it connects again`
        : `folder ${id} dismissed until offered again${whose}`,
    );
    return;
  }
  if (device) {
    await client.addDevice({ deviceID: id, name: options.name ?? device.name, addresses: ['dynamic'] });
    print(
      { ok: 'added', deviceID: id },
      `device ${id} added${device.name ? ` (${options.name ?? device.name})` : ''}`,
    );
    return;
  }
  if (options.name !== undefined)
    throw new ConfigUsageError(`pending accept ${id}: --name goes with a device`);
  await acceptFolder(client, id, folder!, extra, options.type, print);
}

// Accepted as Syncthing's GUI does it: shared with every device offering it, labelled as they call it.
async function acceptFolder(
  client: SyncdClient,
  id: string,
  offer: PendingFolder,
  givenPath: string | undefined,
  type: string | undefined,
  print: Print,
): Promise<void> {
  const label = Object.values(offer.offeredBy).find((by) => by.label !== '')?.label ?? '';
  const path = givenPath ?? (await defaultPath(client, id, label));
  if ((await client.folders()).some((folder) => folder.id === id)) {
    throw new ConfigRefusal(`folder ${id} is configured already: syncd folders share ${id} DEVICE shares it`);
  }
  const folder: Partial<FolderConfiguration> & { id: string; path: string } = {
    id,
    path,
    label,
    devices: Object.keys(offer.offeredBy).map((deviceID) => ({
      deviceID,
      introducedBy: '',
      encryptionPassword: '',
    })),
  };
  if (type !== undefined) folder.type = type;
  await client.addFolder(folder);
  const by = Object.keys(offer.offeredBy);
  print(
    { ok: 'added', id, path, devices: by },
    `folder ${id} added at ${path}, shared with ${by.join(', ')}`,
  );
}

/**
 * Where a folder accepted without a PATH goes, as auto-accept chooses it (auto-accept.ts): under
 * defaults.folder.path, the first of its label and its ID made one name (sanitizePath) that names
 * nothing there yet. The label is the offering device's: never a path of its choosing, never a
 * directory that holds files already.
 */
async function defaultPath(client: SyncdClient, id: string, label: string): Promise<string> {
  const base = (await client.folderDefaults()).path;
  if (base === '' || !isAbsolute(base)) {
    throw new ConfigUsageError(
      `pending accept ${id} needs the PATH where the folder goes (defaults.folder.path is not set to give one)`,
    );
  }
  // The service's machine, not this one, is where the path is: asked through its browse endpoint.
  const there = new Set(
    (await client.browse(`${base.replace(/\/+$/, '')}/`)).map((entry) => entry.replace(/\/+$/, '')),
  );
  for (const name of [sanitizePath(label), sanitizePath(id)]) {
    if (isOneName(name) && !there.has(join(base, name))) return join(base, name);
  }
  throw new ConfigRefusal(
    `pending accept ${id}: ${join(base, sanitizePath(label || id) || id)} exists already; give the PATH where the folder goes`,
  );
}

function pendingTable(
  devices: Record<string, { time: string; name: string; address: string }>,
  folders: Record<string, PendingFolder>,
): string {
  const lines: string[] = [];
  for (const [id, { name, address, time }] of Object.entries(devices)) {
    lines.push(`device  ${id}  ${safeLine(name) || '(no name)'}  from ${address}, last ${localTime(time)}`);
  }
  for (const [id, { offeredBy }] of Object.entries(folders)) {
    for (const [by, { label, time }] of Object.entries(offeredBy)) {
      lines.push(
        `folder  ${safeLine(id)}  ${label ? `"${safeLine(label)}"` : '(no label)'}  offered by ${by}, last ${localTime(time)}`,
      );
    }
  }
  if (lines.length === 0) return 'nothing pending';
  lines.push('', 'syncd pending accept ID [PATH] adds one; syncd pending dismiss ID forgets it');
  return lines.join('\n');
}
