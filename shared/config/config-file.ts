import { isBcryptHash, storedPassword } from '../gui-password.ts';
import { readFile } from 'node:fs/promises';
import { SettingError } from '../settings.ts';
import type { Configuration } from './defaults.ts';
import { decodeConfiguration } from './decode.ts';
import { ConfigProblem, isObject } from './shape.ts';

/**
 * The version of config.json this syncd writes. Each version says what changed, and `migrate` brings
 * an older file up to it:
 * - 0 (no `version`): `{"apiKey": "…"}`;
 * - 1: the same, with `version`;
 * - 2: `{"version": 2, "config": {…}}`, the configuration in Syncthing's shape, the API key in
 *   `config.gui.apiKey`.
 */
export const CONFIG_VERSION = 2;

export interface ConfigFile {
  version: number;
  config: Configuration;
}

export interface LoadedConfig {
  config: Configuration;
  /** Missing, written by an older syncd, or changed while loading (a key generated): save it. */
  changed: boolean;
  /** No API key was stored: this one is new. */
  keyGenerated: boolean;
  /** Fields of an older file that this version has no place for, and dropped. */
  dropped: string[];
}

/**
 * Reads config.json as this version understands it; a missing file is an empty configuration. A key is
 * generated when none is stored. A file that cannot be read, is not JSON, holds a value that cannot be
 * used (named) or comes from a newer syncd is a SettingError, and is never overwritten.
 */
export async function loadConfigFile(
  path: string,
  identity: { myId: string; deviceName: string; newApiKey: () => string },
): Promise<LoadedConfig> {
  const value = await readJson(path);
  const { raw, migrated, dropped } =
    value === undefined ? { raw: {}, migrated: true, dropped: [] } : migrate(value, path);
  const rawGui = isObject(raw.gui) ? raw.gui : {};
  const keyMissing = rawGui.apiKey === undefined || rawGui.apiKey === '';
  // A password written in plain text (by hand) is stored hashed from now on, as Syncthing does.
  const plain = typeof rawGui.password === 'string' && !isBcryptHash(rawGui.password) ? rawGui.password : '';
  const gui = {
    ...rawGui,
    ...(keyMissing ? { apiKey: identity.newApiKey() } : {}),
    ...(plain !== '' ? { password: await storedPassword(plain) } : {}),
  };
  const withKey = keyMissing || plain !== '' ? { ...raw, gui } : raw;
  try {
    const config = decodeConfiguration(withKey, identity.myId, identity.deviceName);
    return { config, changed: migrated || keyMissing || plain !== '', keyGenerated: keyMissing, dropped };
  } catch (error) {
    if (!(error instanceof ConfigProblem)) throw error;
    throw new SettingError(path, `config.${error.message}; fix it or remove the file`, { cause: error });
  }
}

/** The file's text for a configuration: what `save` writes. */
export function configFileText(config: Configuration): string {
  const file: ConfigFile = { version: CONFIG_VERSION, config };
  return `${JSON.stringify(file, null, 2)}\n`;
}

/**
 * The API key config.json holds, for a client finding the service from its home; undefined when there
 * is no file or no key in it. Reads every version, and never writes.
 */
export async function readStoredApiKey(path: string): Promise<string | undefined> {
  const value = await readJson(path);
  if (value === undefined) return undefined;
  const { raw } = migrate(value, path);
  const key = isObject(raw.gui) ? raw.gui.apiKey : undefined;
  return typeof key === 'string' && key !== '' ? key : undefined;
}

async function readJson(path: string): Promise<Record<string, unknown> | undefined> {
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
  if (!isObject(value)) throw new SettingError(path, 'must hold a JSON object; fix or remove it');
  return value;
}

/** Brings a file of any older version to this one: the configuration as JSON, not yet checked. */
export function migrate(
  value: Record<string, unknown>,
  path: string,
): { raw: Record<string, unknown>; migrated: boolean; dropped: string[] } {
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
  if (version === CONFIG_VERSION) {
    const extra = Object.keys(value).filter((key) => key !== 'version' && key !== 'config');
    if (extra.length > 0) {
      throw new SettingError(
        path,
        `"${extra[0]}" is not a field of the file: the configuration goes in "config"`,
      );
    }
    if (!isObject(value.config)) throw new SettingError(path, '"config" must be a JSON object');
    return { raw: value.config, migrated: false, dropped: [] };
  }
  // From 0 and 1: the API key moves to gui.apiKey, as Syncthing keeps it.
  const { apiKey } = value;
  if (apiKey !== undefined && typeof apiKey !== 'string') {
    throw new SettingError(path, `"apiKey" must be a string, not ${JSON.stringify(apiKey)}`);
  }
  const dropped = Object.keys(value).filter((key) => key !== 'version' && key !== 'apiKey');
  return { raw: apiKey === undefined ? {} : { gui: { apiKey } }, migrated: true, dropped };
}
