import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { SettingError, settingLabel } from './settings.ts';
import { loadHomePair, readOptional } from './home-pair.ts';

// The self-signed pair, kept in the home so that every restart and every start serves the same one.
// Syncthing's names for the GUI's pair: cert.pem and key.pem are the device's identity.
export const TLS_CERT_FILE = 'https-cert.pem';
export const TLS_KEY_FILE = 'https-key.pem';
// What earlier versions called them; moved to the names above at start.
const OLD_FILES: ReadonlyArray<[string, string]> = [
  ['tls-cert.pem', TLS_CERT_FILE],
  ['tls-key.pem', TLS_KEY_FILE],
];

export interface TlsPair {
  cert: string;
  key: string;
  source: 'setting' | 'home' | 'generated';
}

/**
 * The certificate and key to serve with: the files given as settings, else the pair in the home, else a
 * new self-signed pair (for localhost, 127.0.0.1 and ::1) written there. Unusable files are a
 * SettingError naming them.
 */
export async function loadTls(home: string, given: { cert?: string; key?: string }): Promise<TlsPair> {
  if (given.cert !== undefined && given.key !== undefined) {
    const cert = await readPem(given.cert, settingLabel('tlsCert'));
    const key = await readPem(given.key, settingLabel('tlsKey'));
    check(cert, key, `${settingLabel('tlsCert')} and ${settingLabel('tlsKey')}`);
    return { cert, key, source: 'setting' };
  }
  await renameOldFiles(home);
  const certPath = join(home, TLS_CERT_FILE);
  const keyPath = join(home, TLS_KEY_FILE);
  return loadHomePair({
    certPath,
    keyPath,
    check: (cert, key) => check(cert, key, `${certPath} and ${keyPath}`),
    generate: selfSigned,
    certMode: 0o644,
    whenPartnerMissing: 'remove both to have a new pair generated',
  });
}

/** The pair under the names of earlier versions takes today's names, unless a file has them already. */
async function renameOldFiles(home: string): Promise<void> {
  for (const [old, now] of OLD_FILES) {
    const [from, to] = [join(home, old), join(home, now)];
    if ((await readOptional(from)) === undefined || (await readOptional(to)) !== undefined) continue;
    try {
      await rename(from, to);
    } catch (error) {
      throw new SettingError(from, `cannot be renamed to ${now}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
}

/**
 * selfsigned's generate(), loaded only when a certificate is made: its X.509 libraries would cost
 * every start time and memory.
 */
export async function certificateGenerator(): Promise<typeof import('selfsigned').generate> {
  const module = await import('selfsigned');
  // A CommonJS package: its exports come as `default` once bundled, as named exports under tsx.
  return ((module as unknown as { default?: typeof module }).default ?? module).generate;
}

/** Its SHA-256 fingerprint, as the log shows it so that a client can be pinned to it. */
export function fingerprint(cert: string): string {
  return new X509Certificate(cert).fingerprint256;
}

async function selfSigned(): Promise<{ cert: string; key: string }> {
  const generate = await certificateGenerator();
  const notAfter = new Date();
  notAfter.setFullYear(notAfter.getFullYear() + 10);
  const pems = await generate([{ name: 'commonName', value: 'syncd on localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate: notAfter,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

function check(cert: string, key: string, what: string): void {
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    throw new SettingError(what, `cannot serve TLS: ${(error as Error).message}`, { cause: error });
  }
}

async function readPem(path: string, setting: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new SettingError(setting, `cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
}
