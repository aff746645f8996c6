import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The first 12 hex digits of a content's SHA-256: enough to tell the files of a test apart. */
export const sha = (content: string | Buffer) =>
  createHash('sha256').update(content).digest('hex').slice(0, 12);

/** Every file under `root`, by its name relative to it, with `sha` of its content; `skip` leaves names out. */
export async function fileTree(
  root: string,
  skip: (name: string) => boolean = () => false,
): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    const name = join(entry.parentPath, entry.name).slice(root.length + 1);
    if (entry.isFile() && !skip(name)) files[name] = sha(await readFile(join(root, name)));
  }
  return files;
}
