import type { ConnectionOptions, TlsOptions } from 'node:tls';

/** BEP's application protocol, offered in ALPN (Syncthing logs, not refuses, a peer without it). */
export const BEP_ALPN = 'bep/1.0';

/** The device's certificate and key (cert.pem and key.pem in the home). */
export interface DeviceCredentials {
  cert: string;
  key: string;
}

// Both sides present the device certificate and accept any: a peer is known by its certificate's
// device ID, not by a CA. TLS 1.3 only, as Syncthing 1.19 insists.
const common = { minVersion: 'TLSv1.3', ALPNProtocols: [BEP_ALPN] } as const;

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
