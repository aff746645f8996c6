import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAddress } from '../address.ts';
import { readStoredApiKey } from '../config/config-file.ts';
import { CONFIG_FILE, readAddressFile, readUrlFile } from '../home.ts';
import { resolveHome, settingSpecs } from '../settings.ts';
import { TLS_CERT_FILE } from '../tls.ts';

export interface Target {
  /** HOST:PORT to connect to. */
  address: string;
  /** The address with its scheme: https when TLS is on. */
  url: string;
  apiKey: string | undefined;
  /** A certificate to trust besides the system's, for a self-signed one (PEM). */
  ca: string | undefined;
  /** Why this address: given (flag or environment), read from the home, or the default for want of both. */
  addressFrom: 'given' | 'home' | 'default';
  /** The home that was read. */
  home: string;
}

/** What to add to a failure to reach the default address: nothing told where the service is. */
export function notRecorded(target: Target): string {
  return target.addressFrom === 'default'
    ? ` (no service is recorded in the home ${target.home}: it has no address file; give --address, or --home of the service)`
    : '';
}

/**
 * Where a client finds the running service: the address and key given, else the environment
 * (SYNCD_ADDRESS, SYNCD_API_KEY), else the home (its `url` and `address` files and config.json), else
 * the default address. HTTPS when asked for (--tls, SYNCD_TLS=1) or when the home's `url` says so; the
 * certificate trusted is SYNCD_TLS_CERT, else the home's self-signed one. A wildcard listening address
 * (0.0.0.0, ::) is reached through loopback.
 */
export async function resolveTarget(
  given: { address?: string; apiKey?: string; home?: string; tls?: boolean },
  env: NodeJS.ProcessEnv,
): Promise<Target> {
  const home = resolveHome(given.home, env);
  let https = given.tls === true || /^(1|true|yes|on)$/i.test(env[settingSpecs.tls.env] ?? '');
  let address = given.address || env[settingSpecs.address.env] || undefined;
  let addressFrom: Target['addressFrom'] = 'given';
  if (!address) {
    const url = await readUrlFile(home);
    const recorded = url?.replace(/^https?:\/\//, '') ?? (await readAddressFile(home));
    addressFrom = recorded === undefined ? 'default' : 'home';
    address = recorded ?? settingSpecs.address.default;
    https ||= url?.startsWith('https://') ?? false;
  }
  let apiKey = given.apiKey ?? (env[settingSpecs.apiKey.env] || undefined);
  apiKey ??= await readStoredApiKey(join(home, CONFIG_FILE)).catch(() => undefined);
  const certPath = env[settingSpecs.tlsCert.env] || join(home, TLS_CERT_FILE);
  const ca = https ? await readFile(certPath, 'utf8').catch(() => undefined) : undefined;
  const reached = reachable(address);
  return { address: reached, url: `${https ? 'https' : 'http'}://${reached}`, apiKey, ca, addressFrom, home };
}

function reachable(address: string): string {
  const parsed = parseAddress(address);
  if (typeof parsed === 'string') return address;
  if (parsed.host === '0.0.0.0') return `127.0.0.1:${parsed.port}`;
  if (parsed.host === '::') return `[::1]:${parsed.port}`;
  return address;
}
