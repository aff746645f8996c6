// The addresses of a bound sync listener that discovery announces, as Syncthing 1.19 reckons a TCP
// listener's LAN and WAN addresses.
import t from 'tap';
import type { NetworkInterfaceInfo } from 'node:os';
import { lanAddresses, listenerAddresses, wanAddresses } from '../../shared/listener-addresses.ts';

// A machine with a private, a link-local and a public IPv4 address, besides loopback and IPv6.
const interfaces = {
  lo: [entry('127.0.0.1'), entry('::1', 'IPv6')],
  eth0: [entry('192.168.1.5'), entry('fd00::5', 'IPv6')],
  eth1: [entry('169.254.7.8'), entry('172.20.0.1')],
  wan0: [entry('203.0.113.9'), entry('172.32.0.1')],
  docker0: [entry('10.1.2.3')],
};

t.test('LAN addresses: the listener, and its port at each private or link-local IPv4 address', async (t) => {
  t.same(lanAddresses('tcp://0.0.0.0:22000', interfaces), [
    'tcp://0.0.0.0:22000',
    'tcp://192.168.1.5:22000',
    'tcp://169.254.7.8:22000',
    'tcp://172.20.0.1:22000',
    'tcp://10.1.2.3:22000',
  ]);
  t.same(
    lanAddresses('tcp6://[::]:22001', interfaces).slice(0, 2),
    ['tcp6://[::]:22001', 'tcp6://192.168.1.5:22001'],
    'every interface of IPv6 too, with the scheme kept, as Syncthing does',
  );
  t.same(
    lanAddresses('tcp://192.0.2.2:22000', interfaces),
    ['tcp://192.0.2.2:22000'],
    'a listener on one address: that address alone',
  );
  t.same(wanAddresses('tcp://0.0.0.0:22000'), ['tcp://0.0.0.0:22000'], 'WAN: the listener itself');
});

t.test('announced: all of them, or the WAN addresses alone', async (t) => {
  const listening = {
    'tcp://0.0.0.0:22000': { bound: 'tcp://0.0.0.0:22000', error: null },
    'tcp://127.0.0.1:1': { bound: null, error: 'listen tcp 127.0.0.1:1: EACCES' },
  };
  t.same(listenerAddresses(listening, true, { eth0: [entry('192.168.1.5')] }), [
    'tcp://0.0.0.0:22000',
    'tcp://192.168.1.5:22000',
  ]);
  t.same(listenerAddresses(listening, false, { eth0: [entry('192.168.1.5')] }), ['tcp://0.0.0.0:22000']);
  t.same(listenerAddresses({}, true), [], 'nothing bound, nothing to announce');
});

function entry(address: string, family: 'IPv4' | 'IPv6' = 'IPv4'): NetworkInterfaceInfo {
  const common = { address, mac: '00:00:00:00:00:00', internal: address === '127.0.0.1' };
  return family === 'IPv4'
    ? { ...common, family, netmask: '255.255.255.0', cidr: `${address}/24` }
    : { ...common, family, netmask: 'ffff:ffff:ffff:ffff::', cidr: `${address}/64`, scopeid: 0 };
}
