import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * A device's allowedNetworks, as Syncthing 1.19 reads them (lib/connections/service.go
 * IsAllowedNetwork): the entries in order, the first whose network holds the address deciding, a
 * `!` before one refusing; no match refuses; an empty list allows every address.
 */
export function isAllowedNetwork(address: string, allowed: readonly string[]): boolean {
  if (allowed.length === 0) return true;
  const ip = address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
  const family = isIPv4(ip) ? 'ipv4' : isIPv6(ip) ? 'ipv6' : undefined;
  if (!family) return false;
  for (const entry of allowed) {
    const refuse = entry.startsWith('!');
    const net = parseCidr(refuse ? entry.slice(1) : entry);
    if (!net || net.family !== family) continue;
    const list = new BlockList();
    list.addSubnet(net.address, net.prefix, net.family);
    if (list.check(ip, family)) return !refuse;
  }
  return false;
}

/** A network as CIDR (192.168.1.0/24, fd00::/8), or undefined when it is not one. */
export function parseCidr(
  text: string,
): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [address = '', bits, ...rest] = text.split('/');
  if (bits === undefined || rest.length > 0 || !/^\d{1,3}$/.test(bits)) return undefined;
  const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined;
  const prefix = Number(bits);
  if (!family || prefix > (family === 'ipv4' ? 32 : 128)) return undefined;
  return { address, prefix, family };
}
