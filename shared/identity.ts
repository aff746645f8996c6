import { createPrivateKey, X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { deviceId } from './device-id.ts';
import { loadHomePair, readOptional } from './home-pair.ts';
import { selfSignedCertificate } from './self-signed.ts';
import { SettingError } from './settings.ts';

// Syncthing's names: the device's certificate and key, in the home.
export const DEVICE_CERT_FILE = 'cert.pem';
export const DEVICE_KEY_FILE = 'key.pem';
// Syncthing's device certificates are valid 20 years of 365 days, from the start of the day they are made.
const LIFETIME_DAYS = 20 * 365;

export interface Identity {
  cert: string;
  key: string;
  /** The device ID, as Syncthing writes it. */
  deviceId: string;
  source: 'home' | 'generated';
}

/**
 * The device's identity: its certificate and key in the home, generated on the first start as Syncthing
 * generates them (ECDSA P-384, CN and SAN DNS `syncthing`, server and client use, 20 years), and reused
 * on every later start. A certificate that cannot be read, or does not go with its key, is a SettingError
 * naming the file; it is never overwritten, since replacing it would change the device's ID.
 */
export async function loadIdentity(home: string): Promise<Identity> {
  const certPath = join(home, DEVICE_CERT_FILE);
  const keyPath = join(home, DEVICE_KEY_FILE);
  const pair = await loadHomePair({
    certPath,
    keyPath,
    check: (cert, key) => void idOf(cert, certPath, key, keyPath),
    generate: generateIdentity,
    certMode: 0o600,
    whenPartnerMissing:
      'restore it, or move both away to have a new device identity (a new device ID) generated',
  });
  return { ...pair, deviceId: idOf(pair.cert, certPath, pair.key, keyPath) };
}

/** The device ID of the certificate in the home, if there is one that can be read. */
export async function readDeviceId(home: string): Promise<string | undefined> {
  const cert = await readOptional(join(home, DEVICE_CERT_FILE)).catch(() => undefined);
  if (cert === undefined) return undefined;
  try {
    return deviceId(new X509Certificate(cert).raw);
  } catch {
    return undefined;
  }
}

function idOf(cert: string, certPath: string, key: string, keyPath: string): string {
  let parsed: X509Certificate;
  try {
    parsed = new X509Certificate(cert);
  } catch (error) {
    throw new SettingError(
      certPath,
      `is not a PEM certificate (${(error as Error).message}); it is never overwritten: fix it or move it away`,
      { cause: error },
    );
  }
  let matches: boolean;
  try {
    matches = parsed.checkPrivateKey(createPrivateKey(key));
  } catch (error) {
    throw new SettingError(
      keyPath,
      `is not a PEM private key (${(error as Error).message}); it is never overwritten`,
      {
        cause: error,
      },
    );
  }
  if (!matches) {
    throw new SettingError(
      `${certPath} and ${keyPath}`,
      "do not go together: the key is not the certificate's; they are never overwritten: restore the right key, or move both away",
    );
  }
  return deviceId(parsed.raw);
}

export async function generateIdentity(): Promise<{ cert: string; key: string }> {
  const notBefore = new Date();
  notBefore.setUTCHours(0, 0, 0, 0);
  return selfSignedCertificate({
    subject: [
      ['O', 'Syncthing'],
      ['OU', 'Automatically Generated'],
      ['CN', 'syncthing'],
    ],
    curve: 'P-384',
    notBefore,
    notAfter: new Date(notBefore.getTime() + LIFETIME_DAYS * 86_400_000),
    critical: true,
    extendedKeyUsage: ['serverAuth', 'clientAuth'],
    dnsNames: ['syncthing'],
  });
}
