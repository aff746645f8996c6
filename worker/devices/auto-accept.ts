import { isAbsolute, join } from 'node:path';
import type { Configuration, FolderConfiguration } from '../../shared/config/defaults.ts';
import { rawDeviceId } from '../../shared/device-id.ts';
import { makeDirectories } from '../../shared/make-directories.ts';
import { writeFileAtomic } from '../../shared/home.ts';
import type { Logger } from '../../shared/logger.ts';
import type { WorkerConfig } from '../config/worker-config.ts';
import { FolderFs, IGNORE_FILE } from '../files/folder-fs.ts';
import { isOneName, sanitizePath } from '../../shared/sanitize-path.ts';
import { encryptedFor, folderDescription, type OfferedFolder } from './cluster-config.ts';

/** New folders accepted from one ClusterConfig at most; past it, the rest stay pending. */
export const MAX_ACCEPTED = 100;
/** Folders configured past which nothing more is auto-accepted. */
export const MAX_FOLDERS = 1000;

export interface AutoAcceptContext {
  config: WorkerConfig;
  myId: string;
  logger: Logger;
}

/**
 * Syncthing's autoAcceptFolders (lib/model/model.go handleAutoAccepts), for a ClusterConfig from a
 * device that has it: each offered folder unknown here is added under defaults.folder.path, at the
 * first of its label and its ID made a name (sanitizePath) where nothing is yet, shared with the
 * device; a known folder not shared with it is shared. Saved as one change of the configuration,
 * which starts the folders and sends the device a new ClusterConfig. What cannot be accepted (no
 * usable defaults.folder.path, every name taken, an encrypted folder, the bounds) is logged and stays
 * pending.
 */
export async function autoAcceptFolders(
  context: AutoAcceptContext,
  device: string,
  offered: readonly OfferedFolder[],
): Promise<void> {
  const { config, logger } = context;
  const paths = await newFolderPaths(context, device, offered);
  // Nothing to add and nothing to share: no change to make.
  const ids = new Set(offered.map((folder) => folder.id));
  const unshared = config.current.folders.some(
    (folder) => ids.has(folder.id) && !folder.devices.some((shared) => shared.deviceID === device),
  );
  if (paths.size === 0 && !unshared) return;
  let said: string[] = [];
  await config.change((draft) => {
    said = acceptFolders(draft, device, offered, paths, context.myId);
  });
  for (const line of said) logger.info({ device }, line);
}

/**
 * The edit of the configuration: the folders of `paths` added at their path, the other offered
 * folders shared with the device where they can be. Returns the log lines, Syncthing's.
 */
export function acceptFolders(
  draft: Configuration,
  device: string,
  offered: readonly OfferedFolder[],
  paths: ReadonlyMap<string, string>,
  myId: string,
): string[] {
  const said: string[] = [];
  if (!draft.devices.find((entry) => entry.deviceID === device)?.autoAcceptFolders) return said;
  const byId = new Map(draft.folders.map((folder) => [folder.id, folder]));
  const encrypted = (folder: OfferedFolder) => encryptedFor(folder, device) || encryptedFor(folder, myId);
  for (const folder of offered) {
    const have = byId.get(folder.id);
    if (have) {
      if (have.devices.some((shared) => shared.deviceID === device)) continue;
      if (encrypted(folder)) {
        said.push(
          `Failed to auto-accept device ${device} on existing folder ${folderDescription(folder)} as the remote wants to send us encrypted data, but the folder type is not receive-encrypted`,
        );
        continue;
      }
      have.devices.push({ deviceID: device, introducedBy: '', encryptionPassword: '' });
      said.push(`Shared ${folder.id} with ${device} due to auto-accept`);
      continue;
    }
    const path = paths.get(folder.id);
    if (path === undefined) continue;
    // Another folder took the path since it was found free.
    if (draft.folders.some((other) => other.path === path)) {
      said.push(conflict(folder, device));
      continue;
    }
    const made: FolderConfiguration = {
      ...structuredClone(draft.defaults.folder),
      id: folder.id,
      label: folder.label,
      filesystemType: 'basic',
      path,
    };
    if (!made.devices.some((shared) => shared.deviceID === device))
      made.devices.push({ deviceID: device, introducedBy: '', encryptionPassword: '' });
    draft.folders.push(made);
    byId.set(folder.id, made);
    said.push(`Auto-accepted ${device} folder ${folderDescription(folder)} at path ${path}`);
  }
  return said;
}

// For each offered folder unknown here that can be accepted, its path: defaults.folder.path joined
// with the first name where nothing is (not followed if a symlink is there), as Syncthing keeps it
// (~ unexpanded). The default ignores are written there, as Syncthing writes them before the start.
async function newFolderPaths(
  context: AutoAcceptContext,
  device: string,
  offered: readonly OfferedFolder[],
): Promise<Map<string, string>> {
  const { config, logger } = context;
  const current = config.current;
  const known = new Set(current.folders.map((folder) => folder.id));
  // A folder whose offer misses either device would close the next connection (see peer.ts).
  const [mine, theirs] = [rawDeviceId(context.myId), rawDeviceId(device)];
  const listsBoth = (folder: OfferedFolder) =>
    folder.devices.some((entry) => mine.equals(entry.id)) &&
    folder.devices.some((entry) => theirs.equals(entry.id));
  const unknown = offered.filter((folder) => !known.has(folder.id) && folder.id !== '' && listsBoth(folder));
  const paths = new Map<string, string>();
  if (unknown.length === 0) return paths;
  const base = current.defaults.folder.path;
  const problem = defaultPathProblem(base);
  if (problem) {
    logger.info({ device }, `Not auto-accepting folders from ${device}: ${problem}`);
    return paths;
  }
  const taken = new Set(current.folders.map((folder) => folder.path));
  const room = Math.min(MAX_ACCEPTED, MAX_FOLDERS - current.folders.length);
  const defaults = new FolderFs(base);
  for (const folder of unknown) {
    if (encryptedFor(folder, device) || encryptedFor(folder, context.myId)) {
      logger.info(
        { device },
        `Not auto-accepting folder ${folderDescription(folder)} from ${device}: it is offered encrypted, and receive-encrypted folders are not supported by syncd`,
      );
      continue;
    }
    if (paths.size >= room) {
      logger.warn(
        { device },
        `Not auto-accepting more folders from ${device} now: at most ${MAX_ACCEPTED} from one ClusterConfig and ${MAX_FOLDERS} in all`,
      );
      break;
    }
    let chosen: string | undefined;
    for (const name of [sanitizePath(folder.label), sanitizePath(folder.id)]) {
      if (!isOneName(name) || taken.has(join(base, name))) continue;
      // Anything there, a symlink or what cannot be looked at included, is a conflict (Syncthing's Lstat).
      const there = await defaults.lstat(name).then(
        (stats) => stats !== undefined,
        () => true,
      );
      if (there) continue;
      chosen = name;
      break;
    }
    if (chosen === undefined) {
      logger.info({ device }, conflict(folder, device));
      continue;
    }
    const path = join(base, chosen);
    taken.add(path);
    paths.set(folder.id, path);
    const ignores = current.defaults.ignores.lines;
    if (ignores.length > 0) await writeDefaultIgnores(defaults, chosen, ignores, logger, folder);
  }
  return paths;
}

// Why defaults.folder.path cannot hold auto-accepted folders: syncd has no default (Syncthing's is the
// home folder), and a folder's path is absolute or starts with ~.
function defaultPathProblem(path: string): string | undefined {
  if (path === '')
    return 'defaults.folder.path is empty (syncd has no default folder path; set one to auto-accept folders)';
  if (!isAbsolute(path) && path !== '~' && !path.startsWith('~/'))
    return `defaults.folder.path "${path}" is relative (give an absolute path, or one starting with ~/)`;
  return undefined;
}

function conflict(folder: OfferedFolder, device: string): string {
  return `Failed to auto-accept folder ${folderDescription(folder)} from ${device} due to path conflict`;
}

// Syncthing's setIgnores on an auto-accepted folder: its root made (never through a symlink), then
// .stignore written with the default ignores.
async function writeDefaultIgnores(
  defaults: FolderFs,
  name: string,
  lines: readonly string[],
  logger: Logger,
  folder: OfferedFolder,
): Promise<void> {
  try {
    await makeDirectories(defaults.root);
    defaults.directory(name, true).close();
    await writeFileAtomic(join(defaults.root, name, IGNORE_FILE), `${lines.join('\n')}\n`, 0o644);
  } catch (error) {
    logger.warn(
      `Failed to apply default ignores to auto-accepted folder ${folderDescription(folder)} in ${defaults.root}: ${(error as Error).message}`,
    );
  }
}
