import { type FolderDirectory, FolderFs, isTemporary, parentOf } from '../files/folder-fs.ts';
import type { FileRecord, FileType } from '../records/file-record.ts';
import type { Ignores } from './ignores.ts';

/** What is on disk for one name of a folder: the part of its record that the disk says. */
export type DiskEntry = Pick<
  FileRecord,
  'name' | 'type' | 'size' | 'permissions' | 'modifiedS' | 'modifiedNs' | 'symlinkTarget'
>;

/** A name the walk could not take: reported as a folder error, and the walk goes on. */
export interface WalkProblem {
  name: string;
  error: string;
}

// Names Syncthing never indexes: its own files in the folder root, and its temporary files anywhere.
const INTERNAL_ROOT_NAMES = new Set(['.stfolder', '.stignore', '.stversions']);

/**
 * Walks a folder's tree, or the subtrees `under` names, depth first, in name order, never following
 * symlinks (so a symlink loop is just a symlink). Yields each file, directory and symlink, in slices of
 * a few milliseconds; what cannot be read (permission denied, a name that is not valid UTF-8, an entry
 * gone mid-walk) goes to `problems`, and the folders it could not read go to `unreadable` (their
 * contents are unknown, not deleted).
 */
export async function* walk(
  root: string,
  options: WalkOptions & { under?: string[]; markerName?: string },
): AsyncGenerator<DiskEntry[]> {
  const internal = new Set([...INTERNAL_ROOT_NAMES, options.markerName ?? '.stfolder']);
  // Every name is read through the folder's files: a directory swapped for a symlink is not entered.
  const fs = new FolderFs(root, options.markerName);
  const starts = options.under && options.under.length > 0 ? options.under : [''];
  const { ignores } = options;
  // What is still to visit, the next one last: a directory's listing goes on top of its later
  // siblings. Each entry is read as its directory is listed, in that directory held open: its parents
  // are looked up once per directory, not once per entry.
  const stack: Listed[] = [];
  for (const start of [...starts].reverse()) {
    if (start === '') {
      pushListing(stack, fs, '', internal, options);
      continue;
    }
    const base = start.slice(start.lastIndexOf('/') + 1);
    if ((!start.includes('/') && internal.has(start)) || isTemporary(base)) continue;
    let dir: FolderDirectory | undefined;
    try {
      dir = fs.directoryOrNone(parentOf(start));
    } catch (error) {
      options.problems.push({ name: start, error: describe(error) });
    }
    if (!dir) continue;
    try {
      stack.push({ name: start, entry: entryOf(dir, start, base, options.problems) });
    } finally {
      dir.close();
    }
  }
  // The file system is asked synchronously, in slices of SLICE_MS with the event loop let go between
  // them: much faster than a promise per file, and HTTP and heartbeats still get their turn every few
  // milliseconds (a slow network file system costs one call more per slice at most).
  let slice: DiskEntry[] = [];
  let sliceStarted = performance.now();
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { name, entry } = next;
    if (!entry) continue;
    const ignored = ignores?.ignored(name) ?? false;
    if (options.onName?.(name, ignored) === false) break;
    // An ignored directory is not entered, unless a ! pattern may take something below it.
    if (ignored && !ignores?.hasIncludes) continue;
    if (!ignored) slice.push(entry);
    if (entry.type === 'directory') pushListing(stack, fs, name, internal, options);
    if (performance.now() - sliceStarted > SLICE_MS) {
      yield slice;
      slice = [];
      await new Promise((resolve) => setImmediate(resolve));
      sliceStarted = performance.now();
    }
  }
  if (slice.length > 0) yield slice;
}

interface WalkOptions {
  problems: WalkProblem[];
  unreadable: Set<string>;
  /**
   * Names not in Unicode's NFC form renamed to it (Syncthing's autoNormalize), so that every device
   * names a file alike; without it, such names are problems and left out.
   */
  autoNormalize?: boolean;
  /** What is not indexed: an ignored directory is not entered, unless a `!` pattern may match below. */
  ignores?: Ignores;
  /**
   * Temporary files last written before this time (ms) are removed as they are met: pulls that will
   * not resume them (Syncthing's keepTemporariesH, lib/scanner/walk.go).
   */
  temporariesBefore?: number;
  /**
   * Told of each name met, ignored or not, before it is taken or passed over (an ignore preview sees
   * what the scan would skip); answering false ends the walk there.
   */
  onName?: (name: string, ignored: boolean) => boolean | void;
}

const SLICE_MS = 2;

// Puts a directory's names on the stack, the first in name order on top; leaves out the folder's own
// files (at its root) and temporary files.
function pushListing(
  stack: Listed[],
  fs: FolderFs,
  relative: string,
  internal: ReadonlySet<string>,
  options: WalkOptions,
): void {
  let dir: FolderDirectory;
  let names: string[];
  try {
    dir = fs.directory(relative);
  } catch (error) {
    options.unreadable.add(relative);
    options.problems.push({ name: relative || '.', error: describe(error) });
    return;
  }
  try {
    try {
      names = dir.readdirSync();
      // A name that is not valid UTF-8 reads as one with U+FFFD in it: only then are the raw bytes
      // asked for (a Buffer per name of every directory cost more than the rest of the listing).
      if (names.some((name) => name.includes('\uFFFD'))) names = validNames(dir, relative, options);
    } catch (error) {
      options.unreadable.add(relative);
      options.problems.push({ name: relative || '.', error: describe(error) });
      return;
    }
    const kept: string[] = [];
    for (const listed of names) {
      const name = normalized(fs, relative, listed, options);
      if (name === undefined || (relative === '' && internal.has(name))) continue;
      if (isTemporary(name)) {
        if (options.temporariesBefore !== undefined) removeIfOlder(dir, name, options.temporariesBefore);
        continue;
      }
      kept.push(name);
    }
    kept.sort();
    for (let i = kept.length - 1; i >= 0; i--) {
      const base = kept[i] as string;
      const name = relative === '' ? base : `${relative}/${base}`;
      stack.push({ name, entry: entryOf(dir, name, base, options.problems) });
    }
  } finally {
    dir.close();
  }
}

// A temporary file not written since `before` goes; one that cannot be read or removed stays.
function removeIfOlder(dir: FolderDirectory, base: string, before: number): void {
  try {
    const stats = dir.lstatSync(base);
    if (stats?.isFile() && stats.mtimeMs < before) dir.unlinkSync(base);
  } catch {
    // Left for the next scan.
  }
}

/** A name to visit, and what was read of it as its directory was listed (undefined: nothing to take). */
interface Listed {
  name: string;
  entry: DiskEntry | undefined;
}

// A listed name in NFC, as Syncthing's scanner takes it on Linux (walk.go normalizePath): renamed on
// disk when nothing has the NFC name yet; undefined (and a problem) when it cannot be.
function normalized(fs: FolderFs, relative: string, name: string, options: WalkOptions): string | undefined {
  const nfc = name.normalize('NFC');
  if (nfc === name) return name;
  const problem = (error: string) => {
    options.problems.push({ name: relative === '' ? name : `${relative}/${name}`, error });
    return undefined;
  };
  if (!options.autoNormalize) {
    return problem('the name is not in Unicode NFC form (autoNormalize is off, so it is left out)');
  }
  const within = (base: string) => (relative === '' ? base : `${relative}/${base}`);
  try {
    if (fs.lstatSync(within(nfc))) {
      return problem(
        `the name is not in Unicode NFC form, and its NFC form ${JSON.stringify(nfc)} exists too`,
      );
    }
  } catch (error) {
    return problem(describe(error));
  }
  try {
    fs.renameSync(within(name), within(nfc));
    return nfc;
  } catch (error) {
    return problem(`the name is not in Unicode NFC form and could not be renamed to it: ${describe(error)}`);
  }
}

// The names of a directory that are valid UTF-8; the others reported as problems.
function validNames(dir: FolderDirectory, relative: string, options: WalkOptions): string[] {
  const valid: string[] = [];
  for (const raw of dir.readdirBytesSync()) {
    const name = raw.toString('utf8');
    if (Buffer.from(name, 'utf8').equals(raw)) valid.push(name);
    else
      options.problems.push({
        name: relative === '' ? name : `${relative}/${name}`,
        error: 'the name is not valid UTF-8, so it cannot be synchronized',
      });
  }
  return valid;
}

// What is at `name`, read in its directory `dir` (held open by the caller) as `base`.
function entryOf(
  dir: FolderDirectory,
  name: string,
  base: string,
  problems: WalkProblem[],
): DiskEntry | undefined {
  try {
    const stats = dir.lstatBigSync(base);
    // Gone between the listing and now: as if it had never been listed.
    if (!stats) return undefined;
    const type: FileType | undefined = stats.isDirectory()
      ? 'directory'
      : stats.isSymbolicLink()
        ? 'symlink'
        : stats.isFile()
          ? 'file'
          : undefined;
    // Sockets, pipes and devices are not synchronized, as in Syncthing.
    if (type === undefined) return undefined;
    let symlinkTarget = '';
    if (type === 'symlink') {
      // Read as its bytes: one that is not UTF-8 would be sent with U+FFFD in it, another target.
      const bytes = dir.readlinkBytesSync(base);
      symlinkTarget = bytes.toString('utf8');
      if (!Buffer.from(symlinkTarget, 'utf8').equals(bytes)) {
        problems.push({
          name,
          error: "the symlink's target is not valid UTF-8, so it cannot be synchronized",
        });
        return undefined;
      }
    }
    return {
      name,
      type,
      size: type === 'file' ? Number(stats.size) : 0,
      permissions: type === 'symlink' ? 0 : Number(stats.mode & 0o777n),
      modifiedS: Number(stats.mtimeNs / 1_000_000_000n),
      modifiedNs: Number(stats.mtimeNs % 1_000_000_000n),
      symlinkTarget,
    };
  } catch (error) {
    // Gone between the listing and now: as if it had never been listed.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    problems.push({ name, error: describe(error) });
    return undefined;
  }
}

export function describe(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return message.replace(/^[A-Z]+: /, '');
}
