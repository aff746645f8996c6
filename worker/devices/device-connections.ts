import { BandwidthLimits } from './bandwidth.ts';
import { isAllowedNetwork } from './allowed-networks.ts';
import { isRelayAddress, parseSyncUrl } from '../../shared/sync-url.ts';
import { lookup } from 'node:dns/promises';
import { X509Certificate } from 'node:crypto';
import type { Socket } from 'node:net';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import type { Configuration, DeviceConfiguration } from '../../shared/config/defaults.ts';
import { deviceId } from '../../shared/device-id.ts';
import type { Logger } from '../../shared/logger.ts';
import { RateLimitedLog } from '../../shared/rate-limited-log.ts';
import { versionInfo } from '../../shared/version.ts';
import { ErrorCode, type Hello } from '../bep/bep_pb.ts';
import type { BepMessage } from '../bep/messages.ts';
import { BepSession, SYNCTHING_TIMES, type SessionEnd, type SessionTimes } from '../bep/session.ts';
import { type DeviceCredentials, serverOptions } from '../bep/tls-options.ts';
import type { WorkerConfig } from '../config/worker-config.ts';
import type { EventLog } from '../events/event-log.ts';
import type { DeviceStats, PendingDevice } from '../index-db/index-db.ts';
import type { DeviceStore } from './device-store.ts';
import { type BlockRequest, RequestError } from '../bep/block-request.ts';
import { PendingFolders } from './pending-folders.ts';
import { compressionFor, type IndexState } from './cluster-config.ts';
import type { IndexExchange, IndexPeer } from './index-exchange.ts';
import type { BlockServer } from './block-server.ts';
import { PeerController } from './peer.ts';
import { MAX_STRING_BYTES } from '../bep/limits.ts';
import { type Dialed, dial, type DialStatus, redialDelayMs } from './dialer.ts';
import { joinSession, parseRelayUrl, type RelayUrl } from '../relay/relay-connection.ts';
import type { SessionInvitation } from '../relay/relay-messages.ts';
import { dialRelay, secureRelayed } from '../relay/relayed-bep.ts';

/** A device connected now, as /rest/system/connections shows it. */
export interface Connection {
  device: string;
  session: BepSession;
  /** The connection as the index exchange sees it. */
  peer: IndexPeer;
  /** What answers its messages (see peer.ts). */
  controller: PeerController;
  type: 'tcp-client' | 'tcp-server' | 'relay-client' | 'relay-server';
  /** The peer's address, HOST:PORT. */
  address: string;
  clientName: string;
  clientVersion: string;
  deviceName: string;
  crypto: string;
  startedAt: Date;
}

/** Bytes received and sent. */
export interface Traffic {
  inBytes: number;
  outBytes: number;
}

export interface DeviceConnectionsOptions {
  myId: string;
  credentials: DeviceCredentials;
  config: WorkerConfig;
  events: EventLog;
  logger: Logger;
  /** The BEP messages' debug lines (the `protocol` facility); `logger` when not given. */
  protocolLogger?: Logger;
  store: DeviceStore;
  index: IndexState;
  /** Addresses discovery knows for a device configured as `dynamic`. */
  lookup?: (device: string) => Promise<string[]>;
  times?: SessionTimes;
  /** How long a dial may take, TLS handshake included. */
  dialTimeoutMs?: number;
  /** The index exchange, when there is an index: without one, indexes received are only checked. */
  exchange?: IndexExchange;
  /** What answers requests for blocks, when there is an index. */
  blocks?: BlockServer;
}

// Syncthing's rule for a second connection from a device: the existing one stays unless it is older
// than this (lib/connections/service.go, minConnectionReplaceAge).
const REPLACE_AFTER_MS = 10_000;
const HANDSHAKE_TIMEOUT_MS = 10_000;
// Syncthing 1.19's connection priorities, lower better (tcp_dial.go, relay_dial.go): a relayed
// connection gives way to a direct one, and a device connected through a relay is still dialed directly.
const TCP_PRIORITY = 10;
const RELAY_PRIORITY = 200;
// Relay sessions being set up at once: invitations past this (a relay flooding them) are dropped.
const MAX_RELAY_SETUPS = 16;
// Syncthing's dial loop ramps up over its first minute (stdConnectionLoopSleep).
const RAMP_UP_MS = 60_000;
// What Syncthing answers for a device never seen: the Unix epoch.
const GO_UNIX_ZERO = '1970-01-01T00:00:00Z';
const CLIENT_NAME = 'syncd';
/** Devices kept as pending at most: past this, a new unknown device is refused without being listed. */
export const MAX_PENDING_DEVICES = 1000;

/**
 * The sync protocol's connections, one per device: incoming ones handed over by the supervisor,
 * outgoing ones dialed to each configured device's addresses (at once when a device is added or
 * resumed, then with backoff). A device not configured is recorded as pending and refused; a paused
 * one is refused, and its connection closed the moment it is paused. Whatever a peer sends that breaks
 * the protocol closes that connection only, with the reason logged.
 */
export class DeviceConnections {
  readonly #options: DeviceConnectionsOptions;
  readonly #log: Logger;
  /** options.maxSendKbps and the rest, for every connection (see bandwidth.ts). */
  readonly #bandwidth: BandwidthLimits;
  readonly #server: Server;
  readonly #connections = new Map<string, Connection>();
  /** Bytes exchanged over each device's connections that have ended (see traffic). */
  readonly #endedTraffic = new Map<string, Traffic>();
  /** Every socket not yet a connection, or one: closed with the service. */
  readonly #sockets = new Set<TLSSocket | Socket>();
  readonly #dialing = new Map<string, { timer?: NodeJS.Timeout; attempts: number; busy: boolean }>();
  readonly #dialStatus = new Map<string, DialStatus>();
  /** When each device may next be dialed through each relay address (relayReconnectIntervalM). */
  readonly #relayDialAt = new Map<string, number>();
  #relaySetups = 0;
  #relayDropLoggedAt = 0;
  #startedAt = Date.now();
  /** Connections in a row that ended within seconds, by device. */
  readonly #quickCloses = new Map<string, number>();
  /** Warnings a device brings again at each reconnection. */
  readonly #repeats = new RateLimitedLog();
  readonly #unsubscribe: () => void;
  #closed = false;

  /** Folders devices offer that are not shared with them here. */
  readonly pendingFolders: PendingFolders;

  constructor(options: DeviceConnectionsOptions) {
    this.#options = options;
    this.#bandwidth = new BandwidthLimits(() => options.config.current);
    this.#log = options.logger;
    this.pendingFolders = new PendingFolders(options);
    this.#server = createServer(serverOptions(options.credentials, HANDSHAKE_TIMEOUT_MS));
    this.#server.on('secureConnection', (socket) => {
      this.#secured(socket, 'tcp-server', {}).catch((error: Error) => {
        this.#log.warn({ err: error }, `connection from ${remoteOf(socket)} failed: ${error.message}`);
        socket.destroy();
      });
    });
    this.#server.on('tlsClientError', (error, socket) => {
      this.#log.debug({ err: error, address: remoteOf(socket) }, `TLS handshake failed: ${error.message}`);
      socket.destroy();
    });
    this.#unsubscribe = options.config.onChange((from, to) => this.#configChanged(from, to));
  }

  /** Starts dialing every configured device. */
  start(): void {
    this.#startedAt = Date.now();
    for (const device of this.#config.devices) this.#scheduleDial(device.deviceID, 0);
  }

  /** A connection accepted on the sync listener, handed over by the supervisor. */
  accept(socket: Socket): void {
    if (this.#closed) {
      socket.destroy();
      return;
    }
    this.#track(socket);
    socket.setNoDelay(true);
    this.#server.emit('connection', socket);
  }

  /**
   * A device asked a relay this one has joined for a session (lib/connections/relay_listen.go
   * handleInvitations): the session joined, then BEP's TLS over it as the invitation says.
   */
  acceptInvitation(invitation: SessionInvitation, relay: RelayUrl, relayIp: string): void {
    if (this.#closed) return;
    // Invitations come on anyone's word (whoever knows this device's ID can ask the relay): sessions
    // set up at once are bounded, and a slot is held only until TLS is done.
    if (this.#relaySetups >= MAX_RELAY_SETUPS) {
      if (Date.now() - this.#relayDropLoggedAt > 60_000) {
        this.#relayDropLoggedAt = Date.now();
        this.#log.info(
          { relay: relay.text },
          `relay session invitations dropped: ${MAX_RELAY_SETUPS} sessions are being set up already`,
        );
      }
      return;
    }
    this.#relaySetups += 1;
    let held = true;
    const release = () => {
      if (held) this.#relaySetups -= 1;
      held = false;
    };
    void joinSession(invitation, relayIp, HANDSHAKE_TIMEOUT_MS)
      .then(async (session) => {
        this.#track(session.raw);
        if (this.#closed) return session.raw.destroy();
        const secure = await secureRelayed(
          session,
          invitation.serverSocket,
          this.#options.credentials,
          HANDSHAKE_TIMEOUT_MS,
        );
        release();
        await this.#secured(secure, 'relay-server', { raw: session.raw });
      })
      .catch((error: Error) =>
        this.#log.info({ relay: relay.text, err: error }, `relay session failed: ${error.message}`),
      )
      .finally(release);
  }

  get connections(): ReadonlyMap<string, Connection> {
    return this.#connections;
  }

  /**
   * Bytes received and sent with each device since the service started, as the connections count them,
   * over ended connections and the current one: Syncthing 2.x's protocol counters
   * (lib/protocol/counting.go), which only grow.
   */
  traffic(): Map<string, Traffic> {
    const out = new Map<string, Traffic>();
    for (const [device, ended] of this.#endedTraffic) out.set(device, { ...ended });
    for (const [device, { session }] of this.#connections) {
      const sum = out.get(device) ?? { inBytes: 0, outBytes: 0 };
      out.set(device, { inBytes: sum.inBytes + session.inBytes, outBytes: sum.outBytes + session.outBytes });
    }
    return out;
  }

  /** The last dial to each address, keyed by address. */
  get lastDialStatus(): Record<string, DialStatus> {
    return Object.fromEntries(this.#dialStatus);
  }

  pendingDevices(): PendingDevice[] {
    return this.#options.store.pendingDevices();
  }

  /** Syncthing's GET /rest/stats/device: every configured device, a connected one seen now. */
  deviceStats(): Record<string, DeviceStats> {
    const stored = this.#options.store.deviceStats();
    const now = new Date().toISOString();
    const out: Record<string, DeviceStats> = {};
    for (const { deviceID } of this.#config.devices) {
      const entry = stored.get(deviceID) ?? { lastSeen: GO_UNIX_ZERO, lastConnectionDurationS: 0 };
      out[deviceID] = this.#connections.has(deviceID) ? { ...entry, lastSeen: now } : entry;
    }
    return out;
  }

  /** Forgets a pending device (the user dismissed it); true when it was pending. */
  dismissPending(device: string): boolean {
    const dropped = this.#options.store.dropPendingDevice(device);
    if (dropped) this.#options.events.log('PendingDevicesChanged', { removed: [{ deviceID: device }] });
    return dropped;
  }

  /**
   * Asks a connected device for a block; resolves with its data (unchecked: the caller checks the
   * hash), rejects with a RequestError when the device answers an error, is not connected, or leaves.
   */
  request(device: string, request: BlockRequest): Promise<Uint8Array> {
    const connection = this.#connections.get(device);
    if (!connection) return Promise.reject(new RequestError(`${device} is not connected`, ErrorCode.GENERIC));
    return connection.session.request(request);
  }

  /** Dials a device now (or every one), for a hint from discovery or a resume. */
  dialNow(device?: string): void {
    for (const known of this.#config.devices) {
      if (device === undefined || known.deviceID === device) this.#scheduleDial(known.deviceID, 0);
    }
  }

  /** Closes every connection with a Close saying why, and stops dialing. */
  async close(reason = 'the device is stopping'): Promise<void> {
    this.#closed = true;
    this.#unsubscribe();
    for (const state of this.#dialing.values()) clearTimeout(state.timer);
    this.#dialing.clear();
    for (const connection of this.#connections.values()) connection.session.close(reason);
    // Each connection gets a moment for its Close to go out; the rest is cut.
    await Promise.all(
      [...this.#sockets].map(
        (socket) =>
          new Promise<void>((resolve) => {
            if (socket.destroyed) return resolve();
            socket.once('close', () => resolve());
            setTimeout(() => socket.destroy(), 1000).unref();
          }),
      ),
    );
  }

  get #config(): Configuration {
    return this.#options.config.current;
  }

  #deviceConfig(device: string): DeviceConfiguration | undefined {
    return this.#config.devices.find((known) => known.deviceID === device);
  }

  #track(socket: TLSSocket | Socket): void {
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
  }

  // After the TLS handshake, either way: who it is, the Hellos, then whether it may stay.
  async #secured(
    socket: TLSSocket,
    type: Connection['type'],
    how: {
      /** The device dialed. */
      expected?: string;
      onData?: Dialed['onData'];
      /** A relayed connection's socket to the relay, whose address is the connection's. */
      raw?: Socket;
    },
  ): Promise<void> {
    const { expected, onData } = how;
    this.#track(socket);
    const address = remoteOf(how.raw ?? socket);
    const ip = (how.raw ?? socket).remoteAddress ?? '';
    const raw = socket.getPeerCertificate(true)?.raw;
    if (!raw || raw.length === 0) {
      this.#log.info({ address }, `connection from ${address} closed: it presented no certificate`);
      socket.destroy();
      return;
    }
    const peer = deviceId(raw);
    const { myId } = this.#options;
    if (peer === myId) {
      socket.destroy();
      return;
    }
    if (expected !== undefined && peer !== expected) {
      socket.destroy();
      throw new Error(`the device at ${address} is ${peer}, not ${expected}`);
    }
    const known = this.#deviceConfig(peer);
    const session = new BepSession(socket, this.#options.times ?? SYNCTHING_TIMES, onData);
    // Every connection, so that limits set later act on it at once, as Syncthing wraps each.
    session.limit(this.#bandwidth.forConnection(peer, ip));
    let hello: Hello;
    try {
      hello = await session.exchangeHello({
        // Syncthing tells its name only to devices it knows.
        deviceName: known ? (this.#deviceConfig(myId)?.name ?? '') : '',
        clientName: CLIENT_NAME,
        clientVersion: versionInfo().version,
        // Neither 2.x's num_connections nor its timestamp: one connection per device, and a 2.x peer
        // wants no more from a device that asks for none (connections/service.go
        // desiredConnectionsToDevice); it takes a timestamp of 0 from the peer.
      });
    } catch (error) {
      this.#log.info(
        { device: peer, address },
        `connection with ${peer} at ${address} ended before its Hello: ${(error as Error).message}`,
      );
      return;
    }
    // The Hello is read before the device is known: what is kept of its name (a pending device's) is
    // cut to the length of any other name a device sends, and copied off the peer's bytes.
    hello.deviceName = Buffer.from(hello.deviceName.slice(0, MAX_STRING_BYTES)).toString();
    const refusal = this.#refusal(peer, hello.deviceName, address, ip, raw);
    if (refusal) {
      session.close(refusal, false);
      return;
    }
    // lib/connections/service.go handle: a new connection replaces one of a worse priority, or one
    // older than 10 s; otherwise it is closed.
    // A 2.x peer makes a second one only to a better address (one connection wanted here), and
    // closes the worse one itself once it is taken.
    const existing = this.#connections.get(peer);
    if (existing) {
      const better = priorityOf(type) < priorityOf(existing.type);
      if (!better && Date.now() - existing.startedAt.getTime() < REPLACE_AFTER_MS) {
        this.#log.debug({ device: peer, address }, 'a second connection from a connected device: closed');
        session.close('a connection to this device exists already', false);
        return;
      }
      this.#log.info(
        { device: peer, address, type, replaced: existing.type },
        `switching connections with ${peer}: ${existing.type} at ${existing.address} replaced by ${type} at ${address}`,
      );
      existing.session.close('replacing connection');
    }
    const indexPeer = { device: peer, send: (message: BepMessage) => session.send(message) };
    const connection: Connection = {
      device: peer,
      session,
      peer: indexPeer,
      controller: new PeerController(
        {
          ...this.#options,
          logger: this.#options.protocolLogger ?? this.#options.logger,
          pendingFolders: this.pendingFolders,
        },
        peer,
        session,
        indexPeer,
      ),
      type,
      address,
      clientName: hello.clientName,
      clientVersion: hello.clientVersion,
      deviceName: hello.deviceName,
      crypto: cryptoOf(socket),
      startedAt: new Date(),
    };
    this.#connected(connection);
  }

  /** Why a device that said Hello may not stay, or undefined when it may; pending devices are recorded. */
  #refusal(peer: string, name: string, address: string, ip: string, cert: Buffer): string | undefined {
    const known = this.#deviceConfig(peer);
    const { events } = this.#options;
    if (!known) {
      const ignored = this.#config.remoteIgnoredDevices.some((device) => device.deviceID === peer);
      if (ignored) return 'the device is ignored';
      const time = new Date().toISOString();
      const pending = this.#options.store.pendingDevices();
      // However many strangers knock, the list the user sees stays short enough to read.
      if (pending.length >= MAX_PENDING_DEVICES && !pending.some((entry) => entry.device === peer)) {
        this.#log.debug(
          { device: peer, address },
          `device ${peer} refused; ${MAX_PENDING_DEVICES} devices are pending already`,
        );
        return 'unknown device';
      }
      const added = this.#options.store.addPendingDevice({ device: peer, name, address, time });
      if (added) events.log('PendingDevicesChanged', { added: [{ deviceID: peer, name, address }] });
      events.log('DeviceRejected', { device: peer, name, address });
      this.#log.info(
        { device: peer, name, address },
        `device ${peer} (${JSON.stringify(name)}) at ${address} is not configured: refused, and listed in GET /rest/cluster/pending/devices`,
      );
      return 'unknown device';
    }
    if (known.paused) return 'device is paused';
    // Syncthing's order (model.go OnHello): after the pause, before the certificate's name.
    if (!isAllowedNetwork(ip, known.allowedNetworks)) {
      this.#log.info(
        { device: peer, address },
        `connection from ${peer} at ${address} rejected: network not allowed (the device's allowedNetworks)`,
      );
      return 'network not allowed';
    }
    const { connectionLimitMax } = this.#config.options;
    if (connectionLimitMax > 0 && this.#connections.size >= connectionLimitMax) {
      this.#log.info(
        { device: peer, address },
        `connection from ${peer} at ${address} rejected: connection limit reached (options.connectionLimitMax ${connectionLimitMax})`,
      );
      return 'connection limit reached';
    }
    const certName = known.certName || 'syncthing';
    const certificate = new X509Certificate(cert);
    const named =
      certificate.checkHost(certName) !== undefined ||
      certificate.subject.split('\n').includes(`CN=${certName}`);
    if (!named) {
      // The device dials again every minute: warned once, then as RateLimitedLog allows.
      const repeated = this.#repeats.note(`certificate ${peer}`, certName);
      if (repeated === undefined) this.#log.debug({ device: peer, address }, `bad certificate from ${peer}`);
      else
        this.#log.warn(
          { device: peer, address },
          `bad certificate from ${peer} at ${address}: it is not valid for the name ${certName} (the device's certName)${repeated}`,
        );
      return 'bad certificate name';
    }
    return undefined;
  }

  #connected(connection: Connection): void {
    const { device, session } = connection;
    this.#connections.set(device, connection);
    // A relayed device is still dialed directly, as often as an unreachable one (service.go connect).
    if (priorityOf(connection.type) > TCP_PRIORITY)
      this.#scheduleDial(device, this.#config.options.reconnectionIntervalS * 1000);
    else this.#stopDialing(device);
    this.#options.store.setDeviceStats(device, {
      lastSeen: connection.startedAt.toISOString(),
      lastConnectionDurationS: this.#options.store.deviceStats().get(device)?.lastConnectionDurationS ?? 0,
    });
    // Told before the session starts: messages that came meanwhile (its ClusterConfig, often) are
    // delivered as it starts, and their events come after this one, as in Syncthing.
    this.#options.events.log('DeviceConnected', {
      addr: connection.address,
      clientName: connection.clientName,
      clientVersion: connection.clientVersion,
      deviceName: connection.deviceName,
      id: device,
      type: connection.type,
    });
    const compression = compressionFor(this.#deviceConfig(device));
    session.start((message) => connection.controller.received(message), compression, device);
    connection.controller.sendClusterConfig();
    this.#log.info(
      { device, address: connection.address, type: connection.type, crypto: connection.crypto },
      `connected to ${device} at ${connection.address} (${connection.type}, ${connection.crypto}); its client is ${connection.clientName} ${connection.clientVersion}, named ${JSON.stringify(connection.deviceName)}`,
    );
    session.onEnd((end) => this.#disconnected(connection, end));
    this.#adoptName(device, connection.deviceName);
  }

  // Syncthing's AddConnection: a device configured without a name takes the one its Hello gives, and
  // with options.overwriteRemoteDeviceNamesOnConnect every device does.
  #adoptName(device: string, name: string): void {
    const entryToName = (config: Configuration) => {
      const entry = config.devices.find((known) => known.deviceID === device);
      const wanted = entry?.name === '' || config.options.overwriteRemoteDeviceNamesOnConnect;
      return entry && wanted && name !== '' && entry.name !== name ? entry : undefined;
    };
    if (!entryToName(this.#config)) return;
    this.#options.config
      .change((draft) => {
        const entry = entryToName(draft);
        if (entry) entry.name = name;
      })
      .catch((error: Error) =>
        this.#log.warn({ device, err: error }, `the name of ${device} could not be saved: ${error.message}`),
      );
  }

  #disconnected(connection: Connection, end: SessionEnd): void {
    const { device } = connection;
    this.#options.exchange?.forget(connection.peer);
    if (this.#connections.get(device) !== connection) return;
    this.#connections.delete(device);
    const ended = this.#endedTraffic.get(device) ?? { inBytes: 0, outBytes: 0 };
    ended.inBytes += connection.session.inBytes;
    ended.outBytes += connection.session.outBytes;
    this.#endedTraffic.set(device, ended);
    const now = new Date();
    this.#options.store.setDeviceStats(device, {
      lastSeen: now.toISOString(),
      lastConnectionDurationS: (now.getTime() - connection.startedAt.getTime()) / 1000,
    });
    this.#options.events.log('DeviceDisconnected', { error: end.reason, id: device });
    const fields = { device, address: connection.address, reason: end.reason };
    const text = `disconnected from ${device} at ${connection.address}: ${end.reason}`;
    // A peer that broke the protocol is worth a warning (and a recent error), at most every 10 minutes
    // while it breaks it the same way at each reconnection; an ordinary close is not.
    const repeated = end.reason.startsWith('protocol error')
      ? this.#repeats.note(`protocol ${device}`, end.reason)
      : undefined;
    if (repeated !== undefined) this.#log.warn(fields, `${text}${repeated}`);
    else this.#log.info(fields, text);
    if (this.#closed) return;
    // A device that keeps closing at once (it does not know this one, or has paused it) is dialed
    // again with backoff, as one that cannot be reached is.
    const lasted = Date.now() - connection.startedAt.getTime();
    const quick = lasted < REPLACE_AFTER_MS ? (this.#quickCloses.get(device) ?? 0) + 1 : 0;
    this.#quickCloses.set(device, quick);
    this.#scheduleDial(
      device,
      quick === 0 ? 1000 : redialDelayMs(quick, this.#config.options.reconnectionIntervalS),
    );
  }

  #configChanged(from: Configuration, to: Configuration): void {
    if (this.#closed) return;
    this.pendingFolders.configured(to);
    const before = new Map(from.devices.map((device) => [device.deviceID, device]));
    const after = new Map(to.devices.map((device) => [device.deviceID, device]));
    for (const [device, connection] of this.#connections) {
      const now = after.get(device);
      if (!now) connection.session.close('the device was removed from the configuration');
      else if (now.paused) connection.session.close('device is paused');
      else if (sharingChanged(from, to, device)) {
        connection.controller.sendClusterConfig();
        this.#options.exchange?.reconsider(connection.peer);
      }
    }
    const pending = new Set(this.pendingDevices().map((device) => device.device));
    for (const [device, now] of after) {
      if (device === this.#options.myId) continue;
      if (pending.has(device)) this.dismissPending(device);
      const was = before.get(device);
      if (!was || (was.paused && !now.paused) || String(was.addresses) !== String(now.addresses)) {
        this.#scheduleDial(device, 0);
      }
    }
    for (const device of before.keys()) if (!after.has(device)) this.#stopDialing(device);
    // A device ignored now is no longer pending (Syncthing's cleanPending, lib/model/model.go).
    for (const ignored of to.remoteIgnoredDevices) {
      if (pending.has(ignored.deviceID)) this.dismissPending(ignored.deviceID);
    }
  }

  #scheduleDial(device: string, delayMs: number): void {
    if (this.#closed || device === this.#options.myId) return;
    let state = this.#dialing.get(device);
    if (!state) this.#dialing.set(device, (state = { attempts: 0, busy: false }));
    clearTimeout(state.timer);
    state.timer = setTimeout(() => void this.#dial(device), delayMs);
    state.timer.unref();
  }

  #stopDialing(device: string): void {
    const state = this.#dialing.get(device);
    clearTimeout(state?.timer);
    this.#dialing.delete(device);
  }

  async #dial(device: string): Promise<void> {
    const state = this.#dialing.get(device);
    const known = this.#deviceConfig(device);
    if (!state || state.busy || this.#closed) return;
    if (!known || known.paused || !this.#mayUpgrade(device, TCP_PRIORITY)) {
      this.#stopDialing(device);
      return;
    }
    // service.go dialDevices: no dial at all once as many devices are connected as the limit says.
    if (this.#atConnectionLimit()) {
      this.#scheduleDial(device, this.#config.options.reconnectionIntervalS * 1000);
      return;
    }
    state.busy = true;
    try {
      for (const address of await this.#addressesOf(known)) {
        if (this.#closed) return;
        const relayed = isRelayAddress(address);
        if (!this.#mayUpgrade(device, relayed ? RELAY_PRIORITY : TCP_PRIORITY)) continue;
        if (relayed && !this.#relayDialDue(device, address)) continue;
        const when = new Date().toISOString();
        // Syncthing's resolveDialTargets: an address outside the device's allowed networks is not dialed.
        if (!(await this.#mayDial(address, known.allowedNetworks))) {
          this.#dialStatus.set(address, { when, error: 'network disallowed' });
          continue;
        }
        if (relayed) this.#relayDialed(device, address);
        const timeoutMs = this.#options.dialTimeoutMs ?? 10_000;
        let dialed: { socket: TLSSocket; onData?: Dialed['onData']; raw?: Socket };
        try {
          dialed = relayed
            ? await dialRelay(address, device, this.#options.credentials, timeoutMs)
            : await dial(address, this.#options.credentials, timeoutMs);
        } catch (error) {
          this.#dialStatus.set(address, { when, error: (error as Error).message });
          continue;
        }
        this.#dialStatus.set(address, { when, error: null });
        if (this.#closed) {
          dialed.socket.destroy();
          return;
        }
        try {
          await this.#secured(dialed.socket, relayed ? 'relay-client' : 'tcp-client', {
            expected: device,
            onData: dialed.onData,
            raw: dialed.raw,
          });
        } catch (error) {
          this.#dialStatus.set(address, { when, error: (error as Error).message });
          continue;
        }
        if (!this.#mayUpgrade(device, TCP_PRIORITY)) return;
      }
    } finally {
      state.busy = false;
    }
    if (this.#closed) return;
    const current = this.#connections.get(device);
    if (current) {
      if (priorityOf(current.type) > TCP_PRIORITY)
        this.#scheduleDial(device, this.#config.options.reconnectionIntervalS * 1000);
      return;
    }
    state.attempts += 1;
    this.#scheduleDial(device, redialDelayMs(state.attempts, this.#config.options.reconnectionIntervalS));
  }

  /** options.connectionLimitEnough and connectionLimitMax, the lower that is set (LowestConnectionLimit). */
  #atConnectionLimit(): boolean {
    const { connectionLimitEnough: enough, connectionLimitMax: max } = this.#config.options;
    const limit = enough === 0 || (max !== 0 && max < enough) ? max : enough;
    return limit > 0 && this.#connections.size >= limit;
  }

  /** Whether a connection of `priority` would replace the device's (none: yes). */
  #mayUpgrade(device: string, priority: number): boolean {
    const current = this.#connections.get(device);
    return !current || priority < priorityOf(current.type);
  }

  /**
   * Whether a relay address is to be dialed now: only with options.relaysEnabled, and each device
   * through each relay once per relayReconnectIntervalM (relay_dial.go RedialFrequency).
   */
  #relayDialDue(device: string, address: string): boolean {
    if (!this.#config.options.relaysEnabled) return false;
    // In its first minute Syncthing's dial loop ramps up and dials every address each time
    // (service.go connect): a peer not yet joined to the relay is tried again within seconds.
    if (Date.now() - this.#startedAt < RAMP_UP_MS) return true;
    return (this.#relayDialAt.get(`${device} ${address}`) ?? 0) <= Date.now();
  }

  #relayDialed(device: string, address: string): void {
    const minutes = Math.max(1, this.#config.options.relayReconnectIntervalM);
    this.#relayDialAt.set(`${device} ${address}`, Date.now() + minutes * 60_000);
  }

  async #mayDial(address: string, allowed: readonly string[]): Promise<boolean> {
    if (allowed.length === 0) return true;
    const url = isRelayAddress(address) ? parseRelayUrl(address) : parseSyncUrl(address);
    if (typeof url === 'string') return false;
    const ip = await lookup(url.host).then(
      (found) => found.address,
      () => '',
    );
    return isAllowedNetwork(ip, allowed);
  }

  /** A device's addresses to dial: those configured, with `dynamic` standing for what discovery knows. */
  async #addressesOf(device: DeviceConfiguration): Promise<string[]> {
    const addresses: string[] = [];
    for (const address of device.addresses) {
      if (address !== 'dynamic') addresses.push(address);
      else addresses.push(...((await this.#options.lookup?.(device.deviceID).catch(() => [])) ?? []));
    }
    // Syncthing dials the best priority first (service.go dialParallel): relays after the rest.
    const unique = [...new Set(addresses)];
    return [...unique.filter((address) => !isRelayAddress(address)), ...unique.filter(isRelayAddress)];
  }
}

/**
 * A connected device's client as /rest/system/connections shows it: its version, after its name when it
 * is another client than Syncthing (1.19 and 2.x alike, model.go ConnectionStats).
 */
export function shownVersion({ clientName, clientVersion }: Connection): string {
  return (clientName === 'syncthing' ? clientVersion : `${clientName} ${clientVersion}`).trim();
}

function sharingChanged(from: Configuration, to: Configuration, device: string): boolean {
  const describe = (config: Configuration) =>
    JSON.stringify(
      config.folders
        .filter((folder) => folder.devices.some((shared) => shared.deviceID === device))
        .map((folder) => [
          folder.id,
          folder.label,
          folder.type,
          folder.paused,
          folder.devices.map((d) => d.deviceID),
        ]),
    );
  return describe(from) !== describe(to);
}

function priorityOf(type: Connection['type']): number {
  return type.startsWith('relay') ? RELAY_PRIORITY : TCP_PRIORITY;
}

function remoteOf(socket: Socket): string {
  const host = socket.remoteAddress ?? '';
  return `${host.includes(':') ? `[${host}]` : host}:${socket.remotePort ?? 0}`;
}

// Syncthing's spelling: TLS1.3-TLS_AES_128_GCM_SHA256.
function cryptoOf(socket: TLSSocket): string {
  const version = (socket.getProtocol() ?? '').replace(/^TLSv/, 'TLS');
  const cipher = socket.getCipher();
  return `${version}-${cipher.standardName ?? cipher.name}`;
}
