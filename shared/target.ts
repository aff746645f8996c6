import { join } from 'node:path';
import { parseAddress } from './address.ts';
import { ADDRESS_FILE, CONFIG_FILE, readAddressFile, readConfig } from './home.ts';
import { resolveHome, settingSpecs } from './settings.ts';

export interface Target {
  /** HOST:PORT to connect to. */
  address: string;
  apiKey: string | undefined;
  /** Where each came from, for messages. */
  sources: { address: string; apiKey: string };
}

/**
 * Where a client finds the running service: the address and key given, else the environment
 * (SYNCD_ADDRESS, SYNCD_API_KEY), else the home (its `address` file and config.json), else the default
 * address. A wildcard listening address (0.0.0.0, ::) is reached through loopback.
 */
export async function resolveTarget(
  given: { address?: string; apiKey?: string; home?: string },
  env: NodeJS.ProcessEnv,
): Promise<Target> {
  const home = resolveHome(given.home, env);
  let address = given.address || env[settingSpecs.address.env] || undefined;
  let addressSource = given.address ? 'flag' : 'SYNCD_ADDRESS';
  if (!address) {
    address = await readAddressFile(home);
    addressSource = join(home, ADDRESS_FILE);
  }
  if (!address) {
    address = settingSpecs.address.default;
    addressSource = 'default';
  }
  let apiKey = given.apiKey ?? (env[settingSpecs.apiKey.env] || undefined);
  let keySource = given.apiKey ? 'flag' : 'SYNCD_API_KEY';
  if (apiKey === undefined) {
    keySource = join(home, CONFIG_FILE);
    apiKey = (await readConfig(keySource).catch(() => undefined))?.apiKey;
    if (apiKey === undefined) keySource = 'none';
  }
  return { address: reachable(address), apiKey, sources: { address: addressSource, apiKey: keySource } };
}

function reachable(address: string): string {
  const parsed = parseAddress(address);
  if (typeof parsed === 'string') return address;
  if (parsed.host === '0.0.0.0') return `127.0.0.1:${parsed.port}`;
  if (parsed.host === '::') return `[::1]:${parsed.port}`;
  return address;
}
