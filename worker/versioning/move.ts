import type { FolderDirectory } from '../files/folder-fs.ts';
import { closeFd, readAt, timesFd, writeAt } from '../files/fd.ts';

const CHUNK = 1 << 20;

/**
 * Moves `fromBase` in `from` to `toBase` in `to` (directories of the folder and of its versions), as
 * lib/osutil/osutil.go RenameOrCopy: a rename, which replaces what is at the target and keeps the
 * file's mode and times; across devices (EXDEV, a versions root on another disk) a copy, the target
 * removed first, made anew (default mode, as Syncthing's Create) with the source's mtime (as the
 * Chtimes that follows RenameOrCopy in util.go), then the source removed.
 */
export async function moveFile(
  from: FolderDirectory,
  fromBase: string,
  to: FolderDirectory,
  toBase: string,
): Promise<void> {
  try {
    return await from.renameInto(fromBase, to, toBase);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
  }
  if (await to.lstat(toBase)) await to.unlink(toBase);
  const source = await from.lstat(fromBase);
  if (!source?.isFile()) throw new Error(`${fromBase} is no longer a regular file`);
  const input = await from.open(fromBase, 'r');
  try {
    const output = await to.open(toBase, 'wx+');
    try {
      await copyAll(input, output);
      await timesFd(output, source.mtimeMs / 1000, source.mtimeMs / 1000);
    } catch (error) {
      await closeFd(output);
      await to.unlink(toBase).catch(() => undefined);
      throw error;
    }
    await closeFd(output);
  } finally {
    await closeFd(input);
  }
  await from.unlink(fromBase);
}

async function copyAll(input: number, output: number): Promise<void> {
  const buffer = Buffer.allocUnsafe(CHUNK);
  for (let position = 0; ;) {
    const read = await readAt(input, buffer, CHUNK, position);
    if (read === 0) return;
    await writeAt(output, buffer.subarray(0, read), position);
    position += read;
  }
}
