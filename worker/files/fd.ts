import * as fs from 'node:fs';

/*
 * Files by descriptor, through Node's callback API, for the paths a transfer takes thousands of times
 * (every block served, every file pulled): a FileHandle of `node:fs/promises` cost about three times
 * the CPU of the same open, read and close here (an object with its own bookkeeping per file, measured
 * with 2,000 files of 4 KiB), and a missing file's lstat twice as much.
 */

const settle =
  <T>(resolve: (value: T) => void, reject: (error: Error) => void) =>
  (error: Error | null, value?: T) =>
    error ? reject(error) : resolve(value as T);

export function openFd(path: string, flags: string | number, mode = 0o666): Promise<number> {
  return new Promise((resolve, reject) => fs.open(path, flags, mode, settle(resolve, reject)));
}

/** Bytes read into `buffer` from `position`: fewer than `length` only at the end of the file. */
export function readAt(fd: number, buffer: Uint8Array, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => fs.read(fd, buffer, 0, length, position, settle(resolve, reject)));
}

/** Writes all of `data` at `position`. */
export async function writeAt(fd: number, data: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < data.length;) {
    const written = await new Promise<number>((resolve, reject) =>
      fs.write(fd, data, done, data.length - done, position + done, settle(resolve, reject)),
    );
    done += written;
  }
}

export function syncFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fsync(fd, settle(resolve, reject)));
}

export function chmodFd(fd: number, mode: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fchmod(fd, mode, settle(resolve, reject)));
}

/** Sets the access and modification times, in seconds. */
export function timesFd(fd: number, atime: number, mtime: number): Promise<void> {
  return new Promise((resolve, reject) => fs.futimes(fd, atime, mtime, settle(resolve, reject)));
}

export function truncateFd(fd: number, length: number): Promise<void> {
  return new Promise((resolve, reject) => fs.ftruncate(fd, length, settle(resolve, reject)));
}

export function sizeOfFd(fd: number): Promise<number> {
  return new Promise((resolve, reject) =>
    fs.fstat(fd, (error, stats) => (error ? reject(error) : resolve(stats.size))),
  );
}

export function closeFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.close(fd, settle(resolve, reject)));
}

/** The entry's lstat, or undefined when nothing is there. */
export function lstatOrNone(path: string): Promise<fs.Stats | undefined> {
  return new Promise((resolve, reject) =>
    fs.lstat(path, (error, stats) =>
      error ? ((error.code === 'ENOENT' ? resolve(undefined) : reject(error)) as void) : resolve(stats),
    ),
  );
}
