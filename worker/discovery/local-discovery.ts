import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { deviceIdFromRaw, rawDeviceId } from '../../shared/device-id.ts';
import type { Logger } from '../../shared/logger.ts';
import { formatSyncUrl, parseSyncUrl } from '../../shared/sync-url.ts';
import { BEP_MAGIC } from '../bep/frames.ts';
import { AnnounceSchema } from './local_pb.ts';

/** Syncthing's local discovery rhythm: an announcement every 30 s, kept by receivers for 90 s. */
export const ANNOUNCE_EVERY_MS = 30_000;
export const LOCAL_TTL_MS = 90_000;
// Syncthing's announcements are about 110 bytes; a datagram larger than this is not one.
const MAX_PACKET = 8192;

export interface LocalDiscoveryOptions {
  myId: string;
  /** UDP port (options.localAnnouncePort, 21027) and IPv6 group (options.localAnnounceMCAddr). */
  port: number;
  multicastAddress: string;
  /** The addresses to announce: the sync listener's. */
  addresses: () => string[];
  /** A device announced itself at these addresses (unspecified hosts replaced by its source). */
  found: (device: string, addresses: string[]) => void;
  logger: Logger;
}

/**
 * Syncthing's local discovery (v4): this device's addresses announced every 30 s by IPv4 broadcast on
 * every interface that has a broadcast address, and by IPv6 multicast (hop limit 1); other devices'
 * announcements heard on the same port. A port another program holds is reported in the status, as
 * Syncthing reports it, and the rest goes on.
 */
export class LocalDiscovery {
  readonly #options: LocalDiscoveryOptions;
  readonly #instanceId = randomBytes(8).readBigInt64BE(0);
  readonly #sockets: Partial<Record<'IPv4 local' | 'IPv6 local', Socket>> = {};
  readonly #errors: Record<'IPv4 local' | 'IPv6 local', string | null> = {
    'IPv4 local': null,
    'IPv6 local': null,
  };
  /** The instance each device last announced: a new one is answered with an announcement at once. */
  readonly #instances = new Map<string, bigint>();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: LocalDiscoveryOptions) {
    this.#options = options;
  }

  /** Syncthing's discoveryStatus entries of local discovery. */
  get status(): Record<string, { error: string | null }> {
    return Object.fromEntries(Object.entries(this.#errors).map(([name, error]) => [name, { error }]));
  }

  async start(): Promise<void> {
    await Promise.all([this.#open('IPv4 local', 'udp4'), this.#open('IPv6 local', 'udp6')]);
    this.announce();
    this.#timer = setInterval(() => this.announce(), ANNOUNCE_EVERY_MS);
    this.#timer.unref();
  }

  /** Sends this device's announcement on every interface now. */
  announce(): void {
    const packet = this.#packet();
    const v4 = this.#sockets['IPv4 local'];
    if (v4) for (const target of broadcastAddresses()) this.#send(v4, 'IPv4 local', packet, target);
    const v6 = this.#sockets['IPv6 local'];
    const group = this.#options.multicastAddress.replace(/^\[(.*)\](:\d+)?$/, '$1');
    if (v6) for (const name of ipv6Interfaces()) this.#send(v6, 'IPv6 local', packet, `${group}%${name}`);
  }

  close(): void {
    clearInterval(this.#timer);
    for (const socket of Object.values(this.#sockets)) socket.close();
  }

  #open(name: 'IPv4 local' | 'IPv6 local', type: 'udp4' | 'udp6'): Promise<void> {
    return new Promise((resolve) => {
      // IPv4 without SO_REUSEADDR, as Syncthing: a second instance on the host learns the port is taken.
      const socket = createSocket({ type, reuseAddr: type === 'udp6' });
      socket.once('error', (error) => {
        this.#errors[name] = `listen ${type} :${this.#options.port}: ${error.message}`;
        this.#options.logger.warn(
          { slot: `discovery-${type}` },
          `local discovery (${name}) cannot listen on UDP port ${this.#options.port}: ${error.message}`,
        );
        socket.close();
        resolve();
      });
      socket.bind({ port: this.#options.port, address: type === 'udp4' ? '0.0.0.0' : '::' }, () => {
        socket.removeAllListeners('error');
        socket.on('error', (error) => {
          this.#errors[name] = error.message;
        });
        if (type === 'udp4') socket.setBroadcast(true);
        else {
          socket.setMulticastTTL(1);
          const group = this.#options.multicastAddress.replace(/^\[(.*)\](:\d+)?$/, '$1');
          for (const iface of ipv6Interfaces()) {
            try {
              socket.addMembership(group, `::%${iface}`);
            } catch {
              // An interface without multicast: nothing to hear there.
            }
          }
        }
        socket.on('message', (message, from) => this.#received(message, from));
        this.#sockets[name] = socket;
        resolve();
      });
    });
  }

  #send(socket: Socket, name: 'IPv4 local' | 'IPv6 local', packet: Buffer, host: string): void {
    socket.send(packet, this.#options.port, host, (error) => {
      this.#errors[name] = error ? `sending to ${host}: ${error.message}` : null;
    });
  }

  #packet(): Buffer {
    const body = toBinary(
      AnnounceSchema,
      create(AnnounceSchema, {
        id: rawDeviceId(this.#options.myId),
        addresses: this.#options.addresses(),
        instanceId: this.#instanceId,
      }),
    );
    const packet = Buffer.allocUnsafe(4 + body.length);
    packet.writeUInt32BE(BEP_MAGIC, 0);
    packet.set(body, 4);
    return packet;
  }

  #received(message: Buffer, from: RemoteInfo): void {
    const announcement = readAnnouncement(message);
    if (!announcement) {
      this.#options.logger.debug(
        { from: from.address },
        'a datagram on the discovery port that is no announcement',
      );
      return;
    }
    const { device, addresses, instanceId } = announcement;
    if (device === this.#options.myId) return;
    const known = this.#instances.get(device);
    this.#instances.set(device, instanceId);
    const resolved = addresses.flatMap((address) => withSource(address, from));
    this.#options.found(device, resolved);
    // A device new here (or restarted) hears of this one at once, as Syncthing does.
    if (known !== instanceId) this.announce();
  }
}

/** A local announcement's device, addresses and instance, or undefined for anything else. */
export function readAnnouncement(
  message: Buffer,
): { device: string; addresses: string[]; instanceId: bigint } | undefined {
  if (message.length < 4 || message.length > MAX_PACKET) return undefined;
  const magic = message.readUInt32BE(0);
  // Version 0.13's magic is not ours either: such packets are ignored, as Syncthing ignores them.
  if (magic !== BEP_MAGIC) return undefined;
  try {
    const announce = fromBinary(AnnounceSchema, message.subarray(4), { readUnknownFields: false });
    if (announce.id.length !== 32) return undefined;
    return {
      device: deviceIdFromRaw(announce.id),
      addresses: announce.addresses,
      instanceId: announce.instanceId,
    };
  } catch {
    return undefined;
  }
}

/** An announced address with an unspecified host (tcp://0.0.0.0:22000) made the packet's source's. */
export function withSource(address: string, from: { address: string; family: string }): string[] {
  const url = parseSyncUrl(address);
  // Syncthing's own "tcp://0.0.0.0:0" and what syncd cannot dial (QUIC, relays) are left out.
  if (typeof url === 'string' || url.port === 0) return [];
  const unspecified = url.host === '' || url.host === '0.0.0.0' || url.host === '::';
  if (!unspecified) return [formatSyncUrl(url)];
  // A link-local IPv6 source needs its zone (fe80::1%eth0), which an address here cannot carry.
  if (from.address.includes('%')) return [];
  return [formatSyncUrl({ ...url, host: from.address })];
}

/** The broadcast address of every non-loopback IPv4 interface; 255.255.255.255 when there is none. */
export function broadcastAddresses(): string[] {
  const targets = new Set<string>();
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) {
      if (address.family !== 'IPv4' || address.internal || address.netmask === '255.255.255.255') continue;
      const ip = address.address.split('.').map(Number);
      const mask = address.netmask.split('.').map(Number);
      targets.add(ip.map((byte, i) => (byte | (~(mask[i] as number) & 255)) & 255).join('.'));
    }
  }
  return targets.size > 0 ? [...targets] : ['255.255.255.255'];
}

function ipv6Interfaces(): string[] {
  return Object.entries(networkInterfaces())
    .filter(([, addresses]) => addresses?.some((address) => address.family === 'IPv6' && !address.internal))
    .map(([name]) => name);
}
