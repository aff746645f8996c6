import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from './home.ts';
import { SettingError } from './settings.ts';

export interface PairOptions {
  certPath: string;
  keyPath: string;
  /** Throws a SettingError when the pair cannot be used. */
  check: (cert: string, key: string) => void;
  generate: () => Promise<{ cert: string; key: string }>;
  certMode: number;
  /** What to do when one file is there without the other. */
  whenPartnerMissing: string;
}

/**
 * A certificate and its key kept in the home: both read and checked when both are there, a new pair
 * generated and written when neither is, and a SettingError naming the one that is missing when only
 * one is. The key is written first and private: a certificate is never left without its key.
 */
export async function loadHomePair(
  options: PairOptions,
): Promise<{ cert: string; key: string; source: 'home' | 'generated' }> {
  const { certPath, keyPath } = options;
  const [cert, key] = await Promise.all([readOptional(certPath), readOptional(keyPath)]);
  if (cert !== undefined && key !== undefined) {
    options.check(cert, key);
    return { cert, key, source: 'home' };
  }
  if (cert !== undefined || key !== undefined) {
    throw new SettingError(
      cert === undefined ? certPath : keyPath,
      `is missing while its partner is there; ${options.whenPartnerMissing}`,
    );
  }
  const made = await options.generate();
  await writeFileAtomic(keyPath, made.key, 0o600);
  await writeFileAtomic(certPath, made.cert, options.certMode);
  return { ...made, source: 'generated' };
}

/** A file's text; undefined when it does not exist; a SettingError naming it when it cannot be read. */
export async function readOptional(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw new SettingError(path, `cannot be read: ${error.message}`, { cause: error });
  });
}
