// A device's allowedNetworks as Syncthing 1.19 reads them (IsAllowedNetwork): in order, the first
// match decides, `!` refuses, no match refuses, an empty list allows all.
import t from 'tap';
import { isAllowedNetwork } from '../../../worker/devices/allowed-networks.ts';
import { parseCidr } from '../../../shared/cidr.ts';

t.test('isAllowedNetwork', async (t) => {
  t.ok(isAllowedNetwork('203.0.113.9', []), 'an empty list allows every address');
  t.ok(isAllowedNetwork('192.168.1.20', ['192.168.1.0/24']));
  t.notOk(isAllowedNetwork('192.168.2.20', ['192.168.1.0/24']), 'no match refuses');
  t.notOk(
    isAllowedNetwork('192.168.1.20', ['!192.168.1.16/28', '192.168.0.0/16']),
    'the first match: refused',
  );
  t.ok(isAllowedNetwork('192.168.1.2', ['!192.168.1.16/28', '192.168.0.0/16']), 'the first match: allowed');
  t.ok(isAllowedNetwork('::ffff:127.0.0.1', ['127.0.0.0/8']), 'an IPv4 address mapped into IPv6');
  t.ok(isAllowedNetwork('fd00::5', ['10.0.0.0/8', 'fd00::/8']));
  t.notOk(isAllowedNetwork('', ['0.0.0.0/0']), 'no address, no match');
  t.same(parseCidr('10.0.0.0/8'), { address: '10.0.0.0', prefix: 8, family: 'ipv4' });
  for (const bad of ['10.0.0.0', '10.0.0.0/33', 'x/8', '10.0.0.0/8/1', '::/129'])
    t.equal(parseCidr(bad), undefined, bad);
});
