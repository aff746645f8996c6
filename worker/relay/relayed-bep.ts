import type { Socket } from 'node:net';
import { connect as tlsConnect, createSecureContext, TLSSocket } from 'node:tls';
import { BEP_ALPN, clientOptions, type DeviceCredentials, serverOptions } from '../bep/tls-options.ts';
import { joinSession, type JoinedSession, parseRelayUrl, requestInvitation } from './relay-connection.ts';

/**
 * BEP's TLS over a joined relay session, as lib/connections/relay_listen.go and relay_dial.go do it:
 * the side the invitation calls the server socket is the TLS server. Resolves with the secured
 * connection, or rejects (and closes the session) when the handshake fails or takes too long.
 */
export function secureRelayed(
  { raw, stream }: JoinedSession,
  asServer: boolean,
  credentials: DeviceCredentials,
  timeoutMs: number,
): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const secure = asServer
      ? new TLSSocket(stream, {
          isServer: true,
          secureContext: createSecureContext(serverOptions(credentials, timeoutMs)),
          requestCert: true,
          rejectUnauthorized: false,
          ALPNProtocols: [BEP_ALPN],
        })
      : tlsConnect({ ...clientOptions(credentials), socket: stream });
    const fail = (error: Error) => {
      clearTimeout(timer);
      secure.destroy();
      raw.destroy();
      reject(new Error(`TLS handshake over the relay: ${error.message}`));
    };
    const timer = setTimeout(() => fail(new Error(`none within ${timeoutMs / 1000} s`)), timeoutMs);
    secure.once('error', fail);
    secure.once(asServer ? 'secure' : 'secureConnect', () => {
      clearTimeout(timer);
      secure.off('error', fail);
      resolve(secure);
    });
    raw.resume();
  });
}

/**
 * Reaches `device` through the relay at `address` (relay_dial.go Dial): an invitation asked of the
 * relay, the session joined, BEP's TLS over it. The dialer is told to be the TLS client.
 */
export async function dialRelay(
  address: string,
  device: string,
  credentials: DeviceCredentials,
  timeoutMs: number,
): Promise<{ socket: TLSSocket; raw: Socket }> {
  const relay = parseRelayUrl(address);
  if (typeof relay === 'string') throw new Error(relay);
  const { invitation, relayIp } = await requestInvitation(relay, device, credentials, timeoutMs);
  const session = await joinSession(invitation, relayIp, timeoutMs);
  return {
    socket: await secureRelayed(session, invitation.serverSocket, credentials, timeoutMs),
    raw: session.raw,
  };
}
