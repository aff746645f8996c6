import { readFileSync } from 'node:fs';
import type { ConnectionOptions, TlsOptions } from 'node:tls';

/** BEP's application protocol, offered in ALPN (Syncthing logs, not refuses, a peer without it). */
export const BEP_ALPN = 'bep/1.0';

/** The device's certificate and key (cert.pem and key.pem in the home). */
export interface DeviceCredentials {
  cert: string;
  key: string;
}

// With AES in hardware, Go (Syncthing) prefers AES-128-GCM, then ChaCha20, then AES-256-GCM, and so
// does a connection either way: OpenSSL's own order puts AES-256 first, a third slower to encrypt and
// decrypt on both ends (2.9 against 4.4 GB/s here), and took it whenever Syncthing dialed syncd.
const AES_FIRST = 'TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384';

/** Whether the CPU has AES instructions (Linux's cpuinfo says so on x86 and ARM); else, OpenSSL's order. */
export function hasAesInstructions(): boolean {
  try {
    return /^(flags|Features)\s*:.*\baes\b/m.test(readFileSync('/proc/cpuinfo', 'utf8'));
  } catch {
    return false;
  }
}

// Both sides present the device certificate and accept any: a peer is known by its certificate's
// device ID, not by a CA. TLS 1.3 only, as Syncthing 1.19 insists.
const common = {
  minVersion: 'TLSv1.3',
  ALPNProtocols: [BEP_ALPN],
  ...(hasAesInstructions() ? { ciphers: AES_FIRST, honorCipherOrder: true } : {}),
} as const;

export function serverOptions(credentials: DeviceCredentials, handshakeTimeoutMs: number): TlsOptions {
  return {
    ...common,
    ...credentials,
    requestCert: true,
    rejectUnauthorized: false,
    handshakeTimeout: handshakeTimeoutMs,
  };
}

export function clientOptions(credentials: DeviceCredentials): ConnectionOptions {
  return { ...common, ...credentials, rejectUnauthorized: false };
}
