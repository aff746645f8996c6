import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { SettingError, settingLabel } from './settings.ts';
import { loadHomePair, readOptional } from './home-pair.ts';
import { selfSignedCertificate } from './self-signed.ts';

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

/** Its SHA-256 fingerprint, as the log shows it so that a client can be pinned to it. */
export function fingerprint(cert: string): string {
  return new X509Certificate(cert).fingerprint256;
}

async function selfSigned(): Promise<{ cert: string; key: string }> {
  const notBefore = new Date();
  const notAfter = new Date(notBefore);
  notAfter.setFullYear(notAfter.getFullYear() + 10);
  return selfSignedCertificate({
    subject: [['CN', 'syncd on localhost']],
    curve: 'P-256',
    notBefore,
    notAfter,
    critical: false,
    extendedKeyUsage: ['serverAuth'],
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1', '::1'],
  });
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
