import { BlockList } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { Configuration } from '../../shared/config/defaults.ts';
import type { ConnectionLimits } from '../bep/session.ts';
import { parseCidr, plainAddress } from '../../shared/cidr.ts';

/** Syncthing's burst for every limiter (lib/connections/limiter.go limiterBurstSize): 512 KiB. */
export const BURST_BYTES = 512 * 1024;

/**
 * A token bucket of bytes at a rate that can change while it runs. A taker takes what it needs at
 * once, into debt if need be, and is told how long to wait before going on: the bytes a connection
 * sends or receives then keep to the rate on average, with a burst of BURST_BYTES, as
 * golang.org/x/time/rate's WaitN keeps Syncthing's.
 */
export class TokenBucket {
  readonly #rate: () => number;
  readonly #now: () => number;
  #tokens = BURST_BYTES;
  #at: number;

  /** `rate`: bytes per second now; 0 or less is no limit. */
  constructor(rate: () => number, now: () => number = () => performance.now()) {
    this.#rate = rate;
    this.#now = now;
    this.#at = now();
  }

  /** Takes `bytes`; answers how many milliseconds to wait before they may go (0: at once). */
  take(bytes: number): number {
    const rate = this.#rate();
    const now = this.#now();
    if (rate <= 0) {
      this.#tokens = BURST_BYTES;
      this.#at = now;
      return 0;
    }
    this.#tokens = Math.min(BURST_BYTES, this.#tokens + ((now - this.#at) * rate) / 1000);
    this.#at = now;
    this.#tokens -= bytes;
    return this.#tokens >= 0 ? 0 : (-this.#tokens * 1000) / rate;
  }
}

/**
 * options.maxSendKbps and maxRecvKbps for all devices together, and each device's own, as Syncthing
 * 1.19 applies them (lib/connections/limiter.go): KiB per second despite the names, 0 for none, a
 * connection waiting on its device's limit and then on the global one. A connection on the LAN goes
 * unlimited unless options.limitBandwidthInLan (read at each wait, as Syncthing reads it).
 */
export class BandwidthLimits {
  readonly #config: () => Configuration;
  readonly #globalSend: TokenBucket;
  readonly #globalReceive: TokenBucket;
  readonly #devices = new Map<string, { send: TokenBucket; receive: TokenBucket }>();

  constructor(config: () => Configuration) {
    this.#config = config;
    this.#globalSend = new TokenBucket(() => kib(config().options.maxSendKbps));
    this.#globalReceive = new TokenBucket(() => kib(config().options.maxRecvKbps));
  }

  /** The limits of one connection of `device`, from `address` (its remote IP, for the LAN test). */
  forConnection(device: string, address: string): ConnectionLimits {
    const lan = isLan(address, this.#config().options.alwaysLocalNets);
    const own = this.#device(device);
    const exempt = () => lan && !this.#config().options.limitBandwidthInLan;
    return {
      send: (bytes) => (exempt() ? 0 : Math.max(own.send.take(bytes), this.#globalSend.take(bytes))),
      receive: (bytes) => (exempt() ? 0 : Math.max(own.receive.take(bytes), this.#globalReceive.take(bytes))),
    };
  }

  /** Whether any limit is set: without one, connections need no accounting at all. */
  get active(): boolean {
    const { options, devices } = this.#config();
    return (
      options.maxSendKbps > 0 ||
      options.maxRecvKbps > 0 ||
      devices.some((device) => device.maxSendKbps > 0 || device.maxRecvKbps > 0)
    );
  }

  #device(device: string) {
    let buckets = this.#devices.get(device);
    if (!buckets) {
      const of = () => this.#config().devices.find((entry) => entry.deviceID === device);
      buckets = {
        send: new TokenBucket(() => kib(of()?.maxSendKbps ?? 0)),
        receive: new TokenBucket(() => kib(of()?.maxRecvKbps ?? 0)),
      };
      this.#devices.set(device, buckets);
    }
    return buckets;
  }
}

function kib(value: number): number {
  return value > 0 ? value * 1024 : 0;
}

/**
 * Syncthing 1.19's LAN (lib/connections/service.go isLAN): loopback, an options.alwaysLocalNets
 * network, or the subnet of one of this machine's own addresses. No private-range test: a
 * 192.168.x.x peer on another subnet is not on the LAN.
 */
export function isLan(address: string, alwaysLocalNets: readonly string[] = []): boolean {
  const plain = plainAddress(address);
  if (!plain) return false;
  const lans = new BlockList();
  lans.addSubnet('127.0.0.0', 8, 'ipv4');
  lans.addAddress('::1', 'ipv6');
  for (const net of alwaysLocalNets) addCidr(lans, net);
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) if (entry.cidr) addCidr(lans, entry.cidr);
  }
  return lans.check(plain.ip, plain.family);
}

function addCidr(list: BlockList, cidr: string): void {
  const net = parseCidr(cidr);
  if (net) list.addSubnet(net.address, net.prefix, net.family);
}
