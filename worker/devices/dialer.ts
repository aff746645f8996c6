import type { OnReadOpts } from 'node:net';
import { type ConnectionOptions, connect as tlsConnect, type TLSSocket } from 'node:tls';
import { bindHost, formatSyncUrl, parseSyncUrl } from '../../shared/sync-url.ts';
import { clientOptions, type DeviceCredentials } from '../bep/tls-options.ts';

/** What the last dial to an address did, as Syncthing's lastDialStatus reports it. */
export interface DialStatus {
  when: string;
  error: string | null;
}

/** A dialed connection, secured, and where what the device sends goes. */
export interface Dialed {
  socket: TLSSocket;
  /**
   * Hears every chunk the device sends, in order, those that came before it first. A dialed
   * connection reads into a buffer of its own (Node's `onread`), not through the socket's stream
   * (`data` events): Node hands TLS plaintext over 16 KiB at a time, and the stream's work for each
   * chunk cost about 150 ms of the worker's thread for every 300 MiB pulled. A chunk is valid only
   * during the call, its memory read into again after it: the listener copies what it keeps (into the
   * frame it belongs to, see frames.ts), where a copy of every chunk cost one more.
   */
  onData(listener: (chunk: Buffer) => void): void;
}

// What one read of TLS plaintext can fill (Node hands over at most 16 KiB a time).
const READ_BUFFER_BYTES = 64 * 1024;

/**
 * Dials a device's address and completes the TLS handshake: resolves with the secured connection, or
 * rejects with an error naming the address and what failed (the connection, or the handshake).
 * Unspecified hosts (0.0.0.0, as a local announcement may carry) are not dialed.
 */
export function dial(address: string, credentials: DeviceCredentials, timeoutMs: number): Promise<Dialed> {
  const url = parseSyncUrl(address);
  if (typeof url === 'string') return Promise.reject(new Error(url));
  const host = bindHost(url);
  if (host === '0.0.0.0' || host === '::') {
    return Promise.reject(new Error(`${formatSyncUrl(url)} names no host to dial`));
  }
  return new Promise((resolve, reject) => {
    let listener: ((chunk: Buffer) => void) | undefined;
    const early: Buffer[] = [];
    // `family` and `onread` go on to the connection as net.connect takes them (tls's types omit them).
    const options: ConnectionOptions & { family: number; onread: OnReadOpts } = {
      ...clientOptions(credentials),
      host,
      port: url.port,
      family: url.scheme === 'tcp4' ? 4 : url.scheme === 'tcp6' ? 6 : 0,
      onread: {
        buffer: Buffer.allocUnsafe(READ_BUFFER_BYTES),
        callback: (length: number, buffer: Uint8Array) => {
          const chunk = (buffer as Buffer).subarray(0, length);
          // Before the session listens, a copy waits for it.
          if (listener) listener(chunk);
          else early.push(Buffer.from(chunk));
          return true;
        },
      },
    };
    const secure = tlsConnect(options);
    // Whether TCP connected, to tell what failed: the socket's `connecting` is already false when a
    // refused connection's error comes.
    let connected = false;
    let settled = false;
    // Errors after the handshake are the session's to hear (it listens from its start).
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      secure.destroy();
      reject(error);
    };
    const timer = setTimeout(
      () => fail(new Error(`dial ${address}: no connection within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
    secure.once('connect', () => {
      connected = true;
      secure.setNoDelay(true);
    });
    secure.on('error', (error) =>
      fail(
        new Error(
          connected ? `TLS handshake with ${address}: ${error.message}` : `dial ${address}: ${error.message}`,
        ),
      ),
    );
    secure.once('secureConnect', () => {
      settled = true;
      clearTimeout(timer);
      resolve({
        socket: secure,
        onData: (hear) => {
          listener = hear;
          for (const chunk of early.splice(0)) hear(chunk);
        },
      });
    });
  });
}

/** The delay before the next dial of a device that could not be reached `attempts` times in a row. */
export function redialDelayMs(attempts: number, reconnectionIntervalS: number): number {
  const ceiling = Math.max(1, reconnectionIntervalS) * 1000;
  return Math.min(ceiling, 1000 * 2 ** Math.max(0, attempts - 1));
}
