import { isIPv4, isIPv6 } from 'node:net';

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

/** An address as a BlockList checks it: an IPv4 one mapped into IPv6 (::ffff:a.b.c.d) as IPv4. */
export function plainAddress(address: string): { ip: string; family: 'ipv4' | 'ipv6' } | undefined {
  const ip = address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
  if (isIPv4(ip)) return { ip, family: 'ipv4' };
  if (isIPv6(ip)) return { ip, family: 'ipv6' };
  return undefined;
}
