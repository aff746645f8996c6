// Conflict copies: what a pull keeps of a local version that loses to another device's
// (lib/model/folder_sendrecv.go moveForConflict and conflictName).
import { basename } from 'node:path';
import { shortIdString } from '../../shared/device-id.ts';
import { FolderFs, parentOf } from '../files/folder-fs.ts';
/** What keeping a conflict copy reads of the folder's configuration. */
interface ConflictFolder {
  path: string;
  markerName?: string;
  maxConflicts?: number;
}

/**
 * Syncthing's conflict copy name (folder_sendrecv.go conflictName): NAME.sync-conflict-YYYYMMDD-HHMMSS-
 * WINNER.EXT in local time, WINNER the short ID of the device that last changed the version that won
 * (the one pulled), EXT from the last part of the path only.
 */
export function conflictName(path: string, modifiedBy: bigint, now = new Date()): string {
  const ext = extensionOf(path);
  const pad = (n: number) => String(n).padStart(2, '0');
  const stamp = `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}-${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`;
  return `${path.slice(0, path.length - ext.length)}.sync-conflict-${stamp}-${shortIdString(modifiedBy)}${ext}`;
}

/**
 * Moves the losing local version of a file out of the way as Syncthing does (folder_sendrecv.go
 * moveForConflict): to a conflict copy named for `winner`, the modifier of the version that replaces
 * it, with at most `maxConflicts` copies of the file kept (the oldest removed; a negative number keeps
 * all); with 0, or when the file is a conflict copy itself, it is not kept at all, as the folder's
 * configuration asks. Answers the copy's name, if one was made.
 */
export async function keepConflict(
  folder: ConflictFolder,
  name: string,
  winner: bigint,
  fs = new FolderFs(folder.path, folder.markerName),
): Promise<string | undefined> {
  const max = folder.maxConflicts ?? 10;
  // Syncthing's isConflict: any name with the marker in it.
  if (basename(name).includes('.sync-conflict-') || max === 0) {
    await fs.unlink(name).catch(ignoreMissing);
    return undefined;
  }
  const copy = conflictName(name, winner);
  await fs.rename(name, copy);
  if (max > 0) {
    const ext = extensionOf(name);
    const stem = basename(name).slice(0, basename(name).length - ext.length);
    const parent = parentOf(name);
    const copies = (await fs.readdir(parent))
      .filter((entry) => entry.startsWith(`${stem}.sync-conflict-`) && entry.endsWith(ext))
      .filter((entry) => CONFLICT_COPY.test(entry))
      .sort()
      .reverse();
    for (const old of copies.slice(max)) {
      await fs.unlink(parent === '' ? old : `${parent}/${old}`).catch(ignoreMissing);
    }
  }
  return copy;
}

// Syncthing's conflict copy names: NAME.sync-conflict-YYYYMMDD-HHMMSS[-MODIFIER][.EXT].
const CONFLICT_COPY = /\.sync-conflict-\d{8}-\d{6}/;
// The same, whole: the stem, the time, the winner's short ID (none in the copies of older Syncthings) and
// the extension, which has no dot but its first.
const CONFLICT_PARTS = /^(.*?)\.sync-conflict-(\d{8}-\d{6})(?:-([A-Z2-7]{7}))?(\.[^.]*)?$/;

/**
 * What a conflict copy's name tells (the reverse of conflictName): the path of the file it was made
 * of, when (YYYYMMDD-HHMMSS, the local time of the device that made it) and the short ID of the device
 * whose version won ('' when the name has none); undefined for a name that is not such a copy.
 */
export function conflictOrigin(
  path: string,
): { original: string; stamp: string; device: string } | undefined {
  const base = basename(path);
  const parts = CONFLICT_PARTS.exec(base);
  if (!parts) return undefined;
  const [, stem = '', stamp = '', device = '', ext = ''] = parts;
  return { original: `${path.slice(0, path.length - base.length)}${stem}${ext}`, stamp, device };
}

/** Go's filepath.Ext, as Syncthing splits names: from the last dot of the last part (`.bashrc` whole). */
function extensionOf(path: string): string {
  const base = basename(path);
  const dot = base.lastIndexOf('.');
  return dot < 0 ? '' : base.slice(dot);
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}
