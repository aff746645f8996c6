import { BlockList } from 'node:net';
import { parseCidr, plainAddress } from '../../shared/cidr.ts';

/**
 * A device's allowedNetworks, as Syncthing 1.19 reads them (lib/connections/service.go
 * IsAllowedNetwork): the entries in order, the first whose network holds the address deciding, a
 * `!` before one refusing; no match refuses; an empty list allows every address.
 */
export function isAllowedNetwork(address: string, allowed: readonly string[]): boolean {
  if (allowed.length === 0) return true;
  const plain = plainAddress(address);
  if (!plain) return false;
  const { ip, family } = plain;
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
