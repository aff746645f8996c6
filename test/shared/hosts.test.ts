import t from 'tap';
import { allowedHostsFor, hostAllowed, hostName } from '../../shared/hosts.ts';

t.test('on loopback only loopback names pass, with or without a port, plus the extra ones', async (t) => {
  const allowed = allowedHostsFor({ host: '127.0.0.1', port: 8384 }, ['Proxy.Example']);
  for (const host of [
    'localhost',
    'LOCALHOST:8384',
    '127.0.0.1',
    '127.0.0.1:8384',
    '[::1]',
    '[::1]:8384',
    'proxy.example:443',
  ]) {
    t.ok(hostAllowed(host, allowed), host);
  }
  for (const host of [
    'evil.test',
    'evil.test:8384',
    '127.0.0.1.evil.test',
    'localhost.evil.test:8384',
    '[::2]:8384',
    '0.0.0.0:8384',
  ]) {
    t.notOk(hostAllowed(host, allowed), host);
  }
  t.ok(hostAllowed(undefined, allowed), 'an HTTP/1.0 request without Host');
});

t.test('the bound loopback address itself passes, IPv6 in brackets', async (t) => {
  t.ok(hostAllowed('127.0.0.2:9000', allowedHostsFor({ host: '127.0.0.2', port: 9000 }, [])));
  t.ok(hostAllowed('[::1]:9000', allowedHostsFor({ host: '::1', port: 9000 }, [])));
});

t.test('on another address any host passes, unless extra names are given', async (t) => {
  t.equal(allowedHostsFor({ host: '0.0.0.0', port: 8384 }, []), null);
  t.ok(hostAllowed('anything.test', null));
  const restricted = allowedHostsFor({ host: '0.0.0.0', port: 8384 }, ['sync.example']);
  t.ok(hostAllowed('sync.example', restricted));
  t.notOk(hostAllowed('evil.test', restricted));
});

t.test('the host part of a Host header', async (t) => {
  t.equal(hostName('[::1]:8384'), '[::1]');
  t.equal(hostName('Example.TEST:80'), 'example.test');
  t.equal(hostName('localhost'), 'localhost');
});
