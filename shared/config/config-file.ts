import { readFile } from 'node:fs/promises';
import { MIN_API_KEY_LENGTH, SettingError } from '../settings.ts';

/**
 * The version of config.json this syncd writes. Each version says what changed, and `migrate` brings
 * an older file up to it:
 * - 0 (no `version`): `{"apiKey": "…"}` and whatever a user added;
 * - 1: the same, with `version`.
 */
export const CONFIG_VERSION = 1;

export interface StoredConfig {
  version: number;
  apiKey?: string;
  [other: string]: unknown;
}

/**
 * Reads config.json as this version understands it: undefined when there is none, `migrated` when it
 * was written by an older version (save it to keep the migration). A file that cannot be read, is not
 * a JSON object, holds a bad value or comes from a newer syncd is a SettingError, and never overwritten.
 */
export async function loadConfig(
  path: string,
): Promise<{ config: StoredConfig; migrated: boolean } | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SettingError(path, `cannot be read: ${(error as Error).message}`, { cause: error });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SettingError(path, `is not valid JSON (${(error as Error).message}); fix or remove it`, {
      cause: error,
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SettingError(path, 'must hold a JSON object; fix or remove it');
  }
  return migrate(value as Record<string, unknown>, path);
}

/** Brings a config of any older version to this one, checking what it holds. */
export function migrate(
  value: Record<string, unknown>,
  path: string,
): { config: StoredConfig; migrated: boolean } {
  const version = value.version ?? 0;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 0) {
    throw new SettingError(path, `"version" must be a whole number, not ${JSON.stringify(version)}`);
  }
  if (version > CONFIG_VERSION) {
    throw new SettingError(
      path,
      `was written by a newer syncd (version ${version}; this one reads up to ${CONFIG_VERSION}): run that one, or remove the file`,
    );
  }
  const { apiKey } = value;
  if (apiKey !== undefined && (typeof apiKey !== 'string' || apiKey.length < MIN_API_KEY_LENGTH)) {
    throw new SettingError(path, `"apiKey" must be a string of at least ${MIN_API_KEY_LENGTH} characters`);
  }
  // From 0 to 1 only the version is added; later steps go here, one per version.
  return { config: { ...value, version: CONFIG_VERSION }, migrated: version < CONFIG_VERSION };
}
