import { mkdirSync, type Stats, statSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/*
 * `mkdir -p`: the missing directories found first, then each made once, parent first. Node's own
 * (`mkdir(path, {recursive: true})`) never ends where a parent exists but cannot hold the child: under
 * /proc, mkdir answers ENOENT, and Node makes the parent (EEXIST) and tries the child again, forever,
 * a thread spinning (with mkdirSync, the event loop). Here that ENOENT is the answer.
 */

/** Makes `path` and its missing parents with `mode`; an existing directory is no error. */
export async function makeDirectories(path: string, mode = 0o777): Promise<void> {
  const missing: string[] = [];
  let found: Stats | undefined;
  for (let at = resolve(path); !found; at = dirname(at)) {
    found = await stat(at).catch((error: unknown) => absent(error, at));
    if (!found) missing.unshift(at);
  }
  // A file where the directory should be: mkdir says so (EEXIST), as Node's does.
  if (missing.length === 0 && !found.isDirectory()) await mkdir(path, { mode });
  for (const at of missing) {
    await mkdir(at, { mode }).catch(async (error: unknown) => {
      if (!madeMeanwhile(error) || !(await stat(at)).isDirectory()) throw error;
    });
  }
}

/** makeDirectories on this thread. */
export function makeDirectoriesSync(path: string, mode = 0o777): void {
  const missing: string[] = [];
  let found: Stats | undefined;
  for (let at = resolve(path); !found; at = dirname(at)) {
    try {
      found = statSync(at);
    } catch (error) {
      absent(error, at);
      missing.unshift(at);
    }
  }
  if (missing.length === 0 && !found.isDirectory()) mkdirSync(path, { mode });
  for (const at of missing) {
    try {
      mkdirSync(at, { mode });
    } catch (error) {
      if (!madeMeanwhile(error) || !statSync(at).isDirectory()) throw error;
    }
  }
}

// A path not there (below the root) is one to make; any other error is the answer.
function absent(error: unknown, at: string): undefined {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT' && dirname(at) !== at) return undefined;
  throw error;
}

// Something there already: a directory someone else made meanwhile is as good as one made here.
function madeMeanwhile(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'EEXIST';
}
