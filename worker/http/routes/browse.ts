import { readdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join, sep } from 'node:path';

/**
 * Directories whose path begins with `current`, for the path box of Syncthing's Add Folder dialog, as
 * its GET /rest/system/browse answers (lib/api/api.go, browseFiles): nothing given lists the roots;
 * `~` is the home directory; a path ending in the separator lists that directory, any other lists the
 * entries of its parent that begin with its last part, those of the same case first. Each comes with
 * a trailing separator; a symbolic link to a directory counts as one. What cannot be read lists
 * nothing.
 */
export async function browse(current: string): Promise<string[]> {
  if (current === '') return [sep];
  const path = expandTilde(current);
  const [directory, prefix] = path.endsWith(sep) ? [path, ''] : [dirname(path), basename(path)];
  const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
  const exact: string[] = [];
  const folded: string[] = [];
  for (const entry of entries) {
    if (!(await isDirectory(join(directory, entry.name), entry.isDirectory(), entry.isSymbolicLink()))) {
      continue;
    }
    const shown = join(directory, entry.name) + sep;
    if (entry.name.startsWith(prefix)) exact.push(shown);
    else if (entry.name.toLowerCase().startsWith(prefix.toLowerCase())) folded.push(shown);
  }
  return [...exact.sort(), ...folded.sort()];
}

function expandTilde(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith(`~${sep}`)) return join(homedir(), path.slice(2)) + (path.endsWith(sep) ? sep : '');
  return path;
}

async function isDirectory(path: string, directory: boolean, link: boolean): Promise<boolean> {
  if (directory) return true;
  if (!link) return false;
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}
