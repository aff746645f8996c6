import { type NetworkInterfaceInfo, networkInterfaces } from 'node:os';
import type { SyncListening } from './ipc/protocol.ts';
import { formatSyncUrl, parseSyncUrl } from './sync-url.ts';

export type Interfaces = NodeJS.Dict<NetworkInterfaceInfo[]>;

/**
 * A bound sync listener's LAN addresses, as Syncthing 1.19 gives a TCP listener's
 * (lib/connections/tcp_listen.go LANAddresses, util.go getHostPortsForAllAdapters): its own, and, when
 * it is bound to every interface, its port at each of this machine's IPv4 addresses that is
 * link-local (169.254/16) or private (10/8, 172.16/12, 192.168/16).
 */
export function lanAddresses(bound: string, interfaces: Interfaces = networkInterfaces()): string[] {
  const url = parseSyncUrl(bound);
  if (typeof url === 'string' || url.port === 0 || !['', '0.0.0.0', '::'].includes(url.host)) return [bound];
  const adapters = Object.values(interfaces)
    .flatMap((entries) => entries ?? [])
    .filter((entry) => entry.family === 'IPv4' && isLanIPv4(entry.address))
    .map((entry) => formatSyncUrl({ ...url, host: entry.address }));
  return [...new Set([bound, ...adapters])];
}

/**
 * Its WAN addresses (tcp_listen.go WANAddresses): its own. Syncthing adds the addresses of its NAT
 * mappings, and tcp://0.0.0.0:0 for dialing from the listen port, neither of which syncd makes.
 */
export function wanAddresses(bound: string): string[] {
  return [bound];
}

/**
 * What discovery announces of the bound listeners (lib/connections/service.go): every LAN and WAN
 * address (AllAddresses), or, with `lan` false, the WAN ones alone (ExternalAddresses when
 * options.announceLANAddresses is false).
 */
export function listenerAddresses(listening: SyncListening, lan: boolean, interfaces?: Interfaces): string[] {
  const bound = Object.values(listening)
    .map((listener) => listener.bound)
    .filter((address): address is string => address !== null);
  const all = bound.flatMap((address) => [
    ...(lan ? lanAddresses(address, interfaces) : []),
    ...wanAddresses(address),
  ]);
  return [...new Set(all)];
}

// Go's IsLinkLocalUnicast, or isV4Local (lib/connections/util.go): 169.254/16, 10/8, 172.16/12, 192.168/16.
function isLanIPv4(address: string): boolean {
  const [a, b] = address.split('.').map(Number);
  return (
    (a === 169 && b === 254) ||
    a === 10 ||
    (a === 172 && b !== undefined && b >= 16 && b < 32) ||
    (a === 192 && b === 168)
  );
}
