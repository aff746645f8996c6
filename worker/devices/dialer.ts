import { connect as tcpConnect } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { bindHost, formatSyncUrl, parseSyncUrl } from '../../shared/sync-url.ts';
import { clientOptions, type DeviceCredentials } from '../bep/tls-options.ts';

/** What the last dial to an address did, as Syncthing's lastDialStatus reports it. */
export interface DialStatus {
  when: string;
  error: string | null;
}

/**
 * Dials a device's address and completes the TLS handshake: resolves with the secured socket, or
 * rejects with an error naming the address and what failed. Unspecified hosts (0.0.0.0, as a local
 * announcement may carry) are not dialed.
 */
export function dial(address: string, credentials: DeviceCredentials, timeoutMs: number): Promise<TLSSocket> {
  const url = parseSyncUrl(address);
  if (typeof url === 'string') return Promise.reject(new Error(url));
  const host = bindHost(url);
  if (host === '0.0.0.0' || host === '::') {
    return Promise.reject(new Error(`${formatSyncUrl(url)} names no host to dial`));
  }
  return new Promise((resolve, reject) => {
    const raw = tcpConnect({
      host,
      port: url.port,
      family: url.scheme === 'tcp4' ? 4 : url.scheme === 'tcp6' ? 6 : 0,
    });
    let settled = false;
    // Errors after the handshake are the session's to hear (it listens from its start).
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      raw.destroy();
      reject(error);
    };
    const timer = setTimeout(
      () => fail(new Error(`dial ${address}: no connection within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
    raw.on('error', (error) => fail(new Error(`dial ${address}: ${error.message}`)));
    raw.once('connect', () => {
      raw.setNoDelay(true);
      const secure = tlsConnect({ ...clientOptions(credentials), socket: raw });
      secure.on('error', (error) => fail(new Error(`TLS handshake with ${address}: ${error.message}`)));
      secure.once('secureConnect', () => {
        settled = true;
        clearTimeout(timer);
        resolve(secure);
      });
    });
  });
}

/** The delay before the next dial of a device that could not be reached `attempts` times in a row. */
export function redialDelayMs(attempts: number, reconnectionIntervalS: number): number {
  const ceiling = Math.max(1, reconnectionIntervalS) * 1000;
  return Math.min(ceiling, 1000 * 2 ** Math.max(0, attempts - 1));
}
