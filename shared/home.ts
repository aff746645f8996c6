import { randomBytes } from 'node:crypto';
import { chmod, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeDirectories } from './make-directories.ts';
import { SettingError, settingLabel } from './settings.ts';

// What the state folder holds: config.json (the configuration with the API key, mode 0600; see
// config/config-file.ts), the device's cert.pem and key.pem, the GUI's TLS pair when generated,
// and, while the service runs, `lock` (which process serves from it) and `address` and `url`, where it
// actually listens, for scripts and clients to read.
export const CONFIG_FILE = 'config.json';
export const ADDRESS_FILE = 'address';
export const URL_FILE = 'url';
export const LOCK_FILE = 'lock';
/** The worker's index of the folders (SQLite). */
export const INDEX_FILE = 'index.sqlite';

/** Creates the home (mode 0700) if missing; a home that cannot be made or written is a SettingError. */
export async function prepareHome(home: string): Promise<void> {
  try {
    await makeDirectories(home, 0o700);
    // A probe write: mkdir succeeds on an existing folder we may not be able to write into.
    const probe = join(home, `.probe-${process.pid}`);
    await writeFile(probe, '');
    await rm(probe);
  } catch (error) {
    throw new SettingError(settingLabel('home'), `cannot use ${home}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/**
 * A new random key: 43 base64url characters (256 bits), never starting with `-`, which a command line
 * would read as an option (`syncd ping --api-key -x…`).
 */
export function newApiKey(): string {
  for (;;) {
    const key = randomBytes(32).toString('base64url');
    if (!key.startsWith('-')) return key;
  }
}

/**
 * The files that say where the running service is: `address` (HOST:PORT) and `url` (with the scheme,
 * https when TLS is on). Written once the socket is bound, removed at shutdown.
 */
export async function writeAddressFiles(home: string, address: string, url: string): Promise<void> {
  await writeFileAtomic(join(home, ADDRESS_FILE), `${address}\n`, 0o644);
  await writeFileAtomic(join(home, URL_FILE), `${url}\n`, 0o644);
}

/** Removes the address files, each only if it still says what this service wrote into it. */
export async function removeAddressFiles(
  home: string,
  written: { address: string; url: string },
): Promise<void> {
  const files: Array<[string, string]> = [
    [ADDRESS_FILE, written.address],
    [URL_FILE, written.url],
  ];
  await Promise.all(
    files.map(async ([name, text]) => {
      if ((await readLine(join(home, name))) === text) await rm(join(home, name), { force: true });
    }),
  );
}

export async function readAddressFile(home: string): Promise<string | undefined> {
  return readLine(join(home, ADDRESS_FILE));
}

export async function readUrlFile(home: string): Promise<string | undefined> {
  return readLine(join(home, URL_FILE));
}

async function readLine(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, 'utf8')).trim() || undefined;
  } catch {
    return undefined;
  }
}

// A reader never sees half a file: write beside it, then rename over it.
export async function writeFileAtomic(path: string, text: string, mode: number): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, text, { mode, flag: 'w' });
    await chmod(temporary, mode);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new SettingError(path, `cannot be written: ${(error as Error).message}`, { cause: error });
  }
}
