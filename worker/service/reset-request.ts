import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../../shared/home.ts';

/**
 * A reset asked for and not yet carried out, kept in the home: the worker that asked answers and
 * restarts, and the worker that next takes the service erases the index before it scans. Written down,
 * so that a worker that dies between the two still has its successor do it.
 */
export const RESET_FILE = 'index-reset.json';

export type ResetScope = { all: true } | { all: false; folders: string[] };

/** Adds a reset of `folder` (every folder when undefined) to what is pending. */
export async function requestReset(home: string, folder: string | undefined): Promise<void> {
  const pending = await pendingReset(home);
  const next: ResetScope =
    folder === undefined || pending?.all
      ? { all: true }
      : { all: false, folders: [...new Set([...(pending?.folders ?? []), folder])] };
  await writeFileAtomic(join(home, RESET_FILE), `${JSON.stringify(next)}\n`, 0o600);
}

/** The reset pending, if any; a file that cannot be read as one is a reset of everything. */
export async function pendingReset(home: string): Promise<ResetScope | undefined> {
  let text: string;
  try {
    text = await readFile(join(home, RESET_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const value = JSON.parse(text) as ResetScope;
    if (value.all === false && Array.isArray(value.folders))
      return { all: false, folders: value.folders.map(String) };
  } catch {
    // Unreadable: the safe reading of a reset asked for is the whole index.
  }
  return { all: true };
}

/** The reset is done. */
export async function clearReset(home: string): Promise<void> {
  await rm(join(home, RESET_FILE), { force: true });
}
