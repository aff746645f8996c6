import { connect as netConnect, isIP, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import {
  canonicalDeviceId,
  deviceId,
  deviceIdFromRaw,
  deviceIdProblem,
  rawDeviceId,
} from '../../shared/device-id.ts';
import type { DeviceCredentials } from '../bep/tls-options.ts';
import {
  encodeRelayMessage,
  type RelayMessage,
  RelayMessageReader,
  RelayProtocolError,
  RESPONSE_SUCCESS,
  type SessionInvitation,
} from './relay-messages.ts';

/** The relay protocol's name in ALPN (lib/relay/protocol ProtocolName). */
const RELAY_ALPN = 'bep-relay';

/** A relay's address: relay://HOST:PORT/?id=DEVICE-ID&… as strelaysrv prints it. */
export interface RelayUrl {
  /** As configured, the key of its status. */
  text: string;
  host: string;
  port: number;
  /** The relay's device ID, checked against its certificate when given. */
  id: string | undefined;
}

/** A relay:// address, or a sentence saying why the text is not one. */
export function parseRelayUrl(text: string): RelayUrl | string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return `"${text}" is not a relay address such as relay://192.0.2.1:22067/?id=…`;
  }
  if (url.protocol !== 'relay:') return `"${text}" is not a relay:// address`;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '' || url.port === '') return `"${text}" names no host and port`;
  const id = url.searchParams.get('id') ?? '';
  if (id !== '' && deviceIdProblem(id) !== undefined)
    return `"${text}": its id is not a device ID (${deviceIdProblem(id)})`;
  return { text, host, port: Number(url.port), id: id === '' ? undefined : canonicalDeviceId(id) };
}

/** A connection to a relay in its protocol mode: TLS checked, messages read and written. */
export class RelayConnection {
  readonly socket: TLSSocket;
  readonly #reader = new RelayMessageReader();
  readonly #queue: RelayMessage[] = [];
  #waiting: { resolve: (message: RelayMessage) => void; reject: (error: Error) => void } | undefined;
  #failure: Error | undefined;

  constructor(socket: TLSSocket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      try {
        for (const message of this.#reader.push(chunk)) this.#deliver(message);
      } catch (error) {
        this.#fail(error as Error);
        socket.destroy();
      }
    });
    socket.on('error', (error) => this.#fail(error));
    socket.on('close', () => this.#fail(new Error('the relay closed the connection')));
  }

  send(message: RelayMessage): void {
    this.socket.write(encodeRelayMessage(message));
  }

  /** The next message, or a rejection when none comes within `timeoutMs` or the connection ends. */
  next(timeoutMs: number): Promise<RelayMessage> {
    const queued = this.#queue.shift();
    if (queued) return Promise.resolve(queued);
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting = undefined;
        reject(new Error('timed out'));
      }, timeoutMs);
      this.#waiting = {
        resolve: (message) => {
          clearTimeout(timer);
          resolve(message);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
    });
  }

  close(): void {
    this.socket.destroy();
  }

  #deliver(message: RelayMessage): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting) waiting.resolve(message);
    // A relay sends little unasked (pings, invitations); past a handful, it is not a relay.
    else if (this.#queue.length < 64) this.#queue.push(message);
    else this.#fail(new RelayProtocolError('the relay sent more than 64 messages unread'));
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.reject(this.#failure);
  }
}

/**
 * Opens a relay connection in protocol mode (lib/relay/client/methods.go configForCerts and
 * performHandshakeAndValidation): TLS with the device's certificate, ALPN bep-relay negotiated, and
 * the relay's certificate that of the id its address names.
 */
export function openRelayConnection(
  relay: RelayUrl,
  credentials: DeviceCredentials,
  timeoutMs: number,
): Promise<RelayConnection> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({
      host: relay.host,
      port: relay.port,
      ...credentials,
      ALPNProtocols: [RELAY_ALPN],
      ...(isIP(relay.host) === 0 ? { servername: relay.host } : {}),
      minVersion: 'TLSv1.2',
      rejectUnauthorized: false,
    });
    const fail = (error: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(new Error(`relay ${relay.host}:${relay.port}: ${error.message}`));
    };
    const timer = setTimeout(() => fail(new Error(`no connection within ${timeoutMs / 1000} s`)), timeoutMs);
    socket.once('error', fail);
    socket.once('secureConnect', () => {
      socket.off('error', fail);
      if (socket.alpnProtocol !== RELAY_ALPN) return fail(new Error('protocol negotiation error'));
      const raw = socket.getPeerCertificate(true)?.raw;
      if (!raw || raw.length === 0) return fail(new Error('the relay presented no certificate'));
      if (relay.id !== undefined && deviceId(raw) !== relay.id)
        return fail(new Error('relay id does not match'));
      clearTimeout(timer);
      resolve(new RelayConnection(socket));
    });
  });
}

/** A relay's answer that is not what was asked for, as Syncthing words it. */
export function unexpected(message: RelayMessage): Error {
  if (message.type === 'Response')
    return new Error(`incorrect response code ${message.code}: ${message.message}`);
  if (message.type === 'RelayFull') return new Error('relay full');
  return new RelayProtocolError(`protocol error: unexpected message ${message.type}`);
}

/**
 * Asks a relay for a session with `device` (methods.go GetInvitationFromRelay), on a connection of
 * its own: the relay closes it after answering.
 */
export async function requestInvitation(
  relay: RelayUrl,
  device: string,
  credentials: DeviceCredentials,
  timeoutMs: number,
): Promise<{ invitation: SessionInvitation; relayIp: string }> {
  const connection = await openRelayConnection(relay, credentials, timeoutMs);
  try {
    connection.send({ type: 'ConnectRequest', id: rawDeviceId(device) });
    const answer = await connection.next(timeoutMs);
    if (answer.type !== 'SessionInvitation') throw unexpected(answer);
    if (deviceIdFromRaw(answer.invitation.from) !== device)
      throw new RelayProtocolError('the relay invited us to a session with another device');
    return { invitation: answer.invitation, relayIp: connection.socket.remoteAddress ?? relay.host };
  } finally {
    connection.close();
  }
}

/**
 * Joins the session an invitation names (methods.go JoinSession): a plain TCP connection to the
 * relay's session address, the invitation's key, the relay's answer; then the connection carries the
 * other device's bytes, BEP's TLS first. `relayHost` (the relay's IP its connection reached) stands
 * for an address the relay left empty or unspecified, as static.go and methods.go do.
 */
export function joinSession(
  invitation: SessionInvitation,
  relayHost: string,
  timeoutMs: number,
): Promise<JoinedSession> {
  const host = sessionHost(invitation.address, relayHost);
  return new Promise((resolve, reject) => {
    const socket = netConnect({ host, port: invitation.port });
    const reader = new RelayMessageReader();
    const fail = (error: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(new Error(`relay session at ${host}:${invitation.port}: ${error.message}`));
    };
    const timer = setTimeout(() => fail(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    socket.once('error', fail);
    socket.once('connect', () => {
      socket.setNoDelay(true);
      socket.write(encodeRelayMessage({ type: 'JoinSessionRequest', key: invitation.key }));
    });
    const onData = (chunk: Buffer) => {
      let answer: RelayMessage | undefined;
      try {
        [answer] = reader.push(chunk, 1);
      } catch (error) {
        return fail(error as Error);
      }
      if (!answer) return;
      socket.off('data', onData);
      socket.off('error', fail);
      socket.pause();
      if (answer.type !== 'Response' || answer.code !== RESPONSE_SUCCESS) return fail(unexpected(answer));
      clearTimeout(timer);
      // What came behind the answer is the other device's, TLS's first bytes: TLS reads a socket's
      // handle, not what was put back into its stream, so the session is then read through a stream
      // that hands those bytes over first.
      const rest = reader.rest();
      resolve({ raw: socket, stream: rest.length === 0 ? socket : withPrefix(socket, rest) });
    };
    socket.on('data', onData);
  });
}

/** A joined session: the relay's socket, and the stream that carries the other device's bytes. */
export interface JoinedSession {
  raw: Socket;
  stream: Duplex;
}

/** A stream over `socket` whose first bytes are `prefix`, read off it already. */
function withPrefix(socket: Socket, prefix: Buffer): Duplex {
  const stream = new Duplex({
    read: () => void socket.resume(),
    write: (chunk: Buffer, _encoding, done) => void socket.write(chunk, done),
    final: (done) => {
      socket.end();
      done();
    },
    destroy: (error, done) => {
      socket.destroy(error ?? undefined);
      done(error);
    },
  });
  stream.push(prefix);
  socket.on('data', (chunk: Buffer) => {
    if (!stream.push(chunk)) socket.pause();
  });
  socket.on('end', () => stream.push(null));
  socket.on('error', (error) => stream.destroy(error));
  socket.on('close', () => stream.destroy());
  return stream;
}

/** The invitation's session address, or the relay's own when the relay sent none or 0.0.0.0. */
function sessionHost(address: Buffer, relayHost: string): string {
  if (address.length === 4) {
    const ip = [...address].join('.');
    return ip === '0.0.0.0' ? relayHost : ip;
  }
  if (address.length === 16) {
    // An IPv4 address may come mapped into IPv6 (::ffff:a.b.c.d).
    if (address.subarray(0, 12).equals(Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]))) {
      const ip = [...address.subarray(12)].join('.');
      return ip === '0.0.0.0' ? relayHost : ip;
    }
    if (address.every((byte) => byte === 0)) return relayHost;
    const groups: string[] = [];
    for (let at = 0; at < 16; at += 2) groups.push(address.readUInt16BE(at).toString(16));
    return groups.join(':');
  }
  return relayHost;
}
