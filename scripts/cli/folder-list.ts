import type { FolderStatus, PendingFolder, SyncdClient } from '../../shared/client/client.ts';
import type { DeviceConfiguration, FolderConfiguration } from '../../shared/config/defaults.ts';
import { safeLine } from '../../shared/terminal-text.ts';
import { bytes, counted, rate, type Rate, sampleRates } from './traffic.ts';
import type { Print } from './format.ts';

/** What `syncd folders` shows of one folder. */
interface FolderRow {
  folder: FolderConfiguration;
  /** Unknown for the moment the index changes hands between workers. */
  status: FolderStatus | undefined;
  /** Bytes per second coming in from the connected devices it is shared with, while it needs data. */
  inBytesPerSecond: number | undefined;
}

/** `syncd folders`: each folder's state, progress, needs and local changes, then the pending ones. */
export async function listFolders(client: SyncdClient, print: Print): Promise<void> {
  const [folders, devices, { connections }, pending] = await Promise.all([
    client.folders(),
    client.devices(),
    client.connections(),
    // Shown when the service holds them (not mid-restart).
    client.pendingFolders().catch(() => ({})),
  ]);
  const statuses = await Promise.all(
    folders.map((folder) => client.folderStatus(folder.id).catch(() => undefined)),
  );
  const pulling = statuses.some((status) => needsData(status));
  const rates = pulling ? await sampleRates(client, connections) : new Map<string, Rate>();
  const rows = folders.map((folder, i): FolderRow => {
    const status = statuses[i];
    const inBytesPerSecond = needsData(status) ? incoming(folder, rates) : undefined;
    return { folder, status, inBytesPerSecond };
  });
  print(
    rows.map(({ folder, status, inBytesPerSecond }) => ({
      ...folder,
      status: status ?? null,
      ...(inBytesPerSecond === undefined ? {} : { inBytesPerSecond }),
    })),
    foldersTable(rows, pending, devices),
  );
}

function needsData(status: FolderStatus | undefined): boolean {
  return status !== undefined && status.needBytes > 0;
}

function incoming(folder: FolderConfiguration, rates: ReadonlyMap<string, Rate>): number {
  return folder.devices.reduce((sum, { deviceID }) => sum + (rates.get(deviceID)?.inBytesPerSecond ?? 0), 0);
}

/** How much of the global versions the folder has, in whole percents, as Syncthing's GUI counts it. */
export function inSyncPercent(status: Pick<FolderStatus, 'globalBytes' | 'inSyncBytes'>): number {
  return status.globalBytes === 0 ? 100 : Math.floor((100 * status.inSyncBytes) / status.globalBytes);
}

function foldersTable(
  rows: FolderRow[],
  pending: Record<string, PendingFolder>,
  devices: DeviceConfiguration[],
): string {
  const lines: string[] = [];
  for (const { folder, status, inBytesPerSecond } of rows) {
    const state = status
      ? `${status.state}${status.error ? ` (${status.error})` : ''}, ${status.localFiles} files, ${status.localDirectories} directories, ${bytes(status.localBytes)}${status.errors > 0 ? `, ${status.errors} errors (syncd need ${folder.id})` : ''}`
      : 'state unknown';
    lines.push(
      `${folder.id}${folder.label && folder.label !== folder.id ? ` ("${safeLine(folder.label)}")` : ''}  ${folder.path}  ${folder.type}  shared with ${counted(folder.devices.length - 1, 'device')}  ${state}`,
    );
    if (!status) continue;
    if (status.needTotalItems > 0 && folder.type === 'sendonly') {
      // Syncthing's "Out of Sync": other devices changed what this folder only sends.
      lines.push(
        `  out of sync: ${counted(status.needTotalItems, 'item')} changed elsewhere (syncd folders override ${folder.id} makes this folder's versions win)`,
      );
    } else if (status.needTotalItems > 0) {
      const speed = inBytesPerSecond === undefined ? '' : `, ${rate(inBytesPerSecond)} in`;
      lines.push(
        `  needs ${counted(status.needTotalItems, 'item')}, ${bytes(status.needBytes)}: ${inSyncPercent(status)}% of ${bytes(status.globalBytes)} in sync${speed} (syncd need ${folder.id} lists them)`,
      );
    }
    if (status.receiveOnlyTotalItems > 0) {
      lines.push(
        `  local changes: ${counted(status.receiveOnlyTotalItems, 'item')}, ${bytes(status.receiveOnlyChangedBytes)} (syncd folders revert ${folder.id} undoes them)`,
      );
    }
  }
  const names = new Map(devices.map((device) => [device.deviceID, device.name]));
  for (const [id, { offeredBy }] of Object.entries(pending)) {
    const by = Object.entries(offeredBy).map(
      ([device, offer]) =>
        `${safeLine(names.get(device) || device.slice(0, 7))}${offer.label ? ` as "${safeLine(offer.label)}"` : ''}`,
    );
    const shown = safeLine(id);
    lines.push(
      `${shown}  (pending: offered by ${by.join(', ')}; syncd pending accept ${shown} PATH shares it)`,
    );
  }
  return lines.length === 0 ? 'no folders' : lines.join('\n');
}
