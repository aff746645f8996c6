import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';

export interface BuiltFile {
  path: string;
  contents: Uint8Array;
}

export interface ReplaceOptions {
  /** Paths under these (relative to the folder) are left alone. */
  keep?: readonly string[];
  /** Files of an older build are removed only once this old: a worker that read an old entry loads its chunks. */
  graceMs?: number;
}

/**
 * Puts a new build in place of the one in `dir` without a moment when a file is missing: a service may
 * run from that folder while it is rebuilt (npm ci in its checkout). Each file replaces the old one in
 * one rename, chunks before the entries that import them, so a worker started meanwhile finds the old
 * build or the new one, whole. Files of older builds that the new one does not have go once they are
 * older than the grace.
 */
export async function replaceBuild(
  dir: string,
  files: readonly BuiltFile[],
  { keep = [], graceMs = 60_000 }: ReplaceOptions = {},
): Promise<void> {
  const chunksFirst = [...files].sort(
    (a, b) => Number(!a.path.includes('/chunks/')) - Number(!b.path.includes('/chunks/')),
  );
  for (const file of chunksFirst) {
    await mkdir(dirname(file.path), { recursive: true });
    const temporary = `${file.path}.${process.pid}.tmp`;
    // A file that starts with #! is a command, run directly (the package's bin).
    const executable = file.contents[0] === 0x23 && file.contents[1] === 0x21;
    await writeFile(temporary, file.contents, { mode: executable ? 0o755 : 0o644 });
    await rename(temporary, file.path);
  }
  const built = new Set(files.map((file) => relative(dir, file.path)));
  const before = Date.now() - graceMs;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    const name = relative(dir, path);
    if (!entry.isFile() || built.has(name) || keep.some((kept) => name.startsWith(kept))) continue;
    if ((await stat(path)).mtimeMs < before) await rm(path, { force: true });
  }
}
