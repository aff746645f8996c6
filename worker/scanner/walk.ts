import { lstatSync, readlinkSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileRecord, FileType } from '../index-db/file-record.ts';
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
const isTemporary = (base: string) => base.startsWith('.syncthing.') && base.endsWith('.tmp');

/**
 * Walks a folder's tree, or the subtrees `under` names, depth first, in name order, never following
 * symlinks (so a symlink loop is just a symlink). Yields each file, directory and symlink; what cannot
 * be read (permission denied, a name that is not valid UTF-8, an entry gone mid-walk) goes to
 * `problems`, and the folders it could not read go to `unreadable` (their contents are unknown, not
 * deleted).
 */
export async function* walk(
  root: string,
  options: WalkOptions & { under?: string[]; markerName?: string },
): AsyncGenerator<DiskEntry> {
  const internal = new Set([...INTERNAL_ROOT_NAMES, options.markerName ?? '.stfolder']);
  const starts = options.under && options.under.length > 0 ? options.under : [''];
  for (const start of starts) {
    if (start !== '') {
      const base = start.slice(start.lastIndexOf('/') + 1);
      if ((!start.includes('/') && internal.has(start)) || isTemporary(base)) continue;
      const ignored = options.ignores?.ignored(start) ?? false;
      if (ignored && !options.ignores?.hasIncludes) continue;
      const entry = await entryOf(root, start, options.problems);
      if (!entry) continue;
      if (!ignored) yield entry;
      if (entry.type !== 'directory') continue;
    }
    yield* walkDirectory(root, start, internal, options);
  }
}

interface WalkOptions {
  problems: WalkProblem[];
  unreadable: Set<string>;
  /** What is not indexed: an ignored directory is not entered, unless a `!` pattern may match below. */
  ignores?: Ignores;
}

async function* walkDirectory(
  root: string,
  relative: string,
  internal: ReadonlySet<string>,
  options: WalkOptions,
): AsyncGenerator<DiskEntry> {
  let names: Buffer[];
  try {
    names = await readdir(join(root, relative), { encoding: 'buffer' });
  } catch (error) {
    options.unreadable.add(relative);
    options.problems.push({ name: relative || '.', error: describe(error) });
    return;
  }
  const decoded: string[] = [];
  for (const raw of names) {
    const name = raw.toString('utf8');
    const full = relative === '' ? name : `${relative}/${name}`;
    if (!Buffer.from(name, 'utf8').equals(raw)) {
      options.problems.push({
        name: full,
        error: 'the name is not valid UTF-8, so it cannot be synchronized',
      });
      continue;
    }
    if ((relative === '' && internal.has(name)) || isTemporary(name)) continue;
    decoded.push(full);
  }
  decoded.sort();
  const { ignores } = options;
  for (const name of decoded) {
    const ignored = ignores?.ignored(name) ?? false;
    if (ignored && !ignores?.hasIncludes) continue;
    const entry = await entryOf(root, name, options.problems);
    if (!entry) continue;
    if (!ignored) yield entry;
    if (entry.type === 'directory') yield* walkDirectory(root, name, internal, options);
  }
}

// The file system is asked synchronously, in slices of this many milliseconds with the event loop
// let go between them: much faster than a promise per file, and HTTP and heartbeats still get their
// turn every few milliseconds (a slow network file system costs one call more per slice at most).
const SLICE_MS = 2;
let sliceStarted = 0;

async function entryOf(root: string, name: string, problems: WalkProblem[]): Promise<DiskEntry | undefined> {
  const now = performance.now();
  if (now - sliceStarted > SLICE_MS) {
    await new Promise((resolve) => setImmediate(resolve));
    sliceStarted = performance.now();
  }
  const path = join(root, name);
  try {
    const stats = lstatSync(path, { bigint: true });
    const type: FileType | undefined = stats.isDirectory()
      ? 'directory'
      : stats.isSymbolicLink()
        ? 'symlink'
        : stats.isFile()
          ? 'file'
          : undefined;
    // Sockets, pipes and devices are not synchronized, as in Syncthing.
    if (type === undefined) return undefined;
    return {
      name,
      type,
      size: type === 'file' ? Number(stats.size) : 0,
      permissions: Number(stats.mode & 0o777n),
      modifiedS: Number(stats.mtimeNs / 1_000_000_000n),
      modifiedNs: Number(stats.mtimeNs % 1_000_000_000n),
      symlinkTarget: type === 'symlink' ? readlinkSync(path) : '',
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
