// Bandwidth limits as Syncthing 1.19 applies them: token buckets of KiB/s with a 512 KiB burst, a
// device's limit and the global one, the LAN exempt unless limitBandwidthInLan.
import t from 'tap';
import { BandwidthLimits, BURST_BYTES, isLan, TokenBucket } from '../../../worker/devices/bandwidth.ts';
import { newDeviceId, testConfiguration } from '../../helpers/config.ts';

t.test('TokenBucket: a burst at once, then the rate; no rate, no wait', async (t) => {
  let now = 0;
  let rate = 1024 * 1024;
  const bucket = new TokenBucket(
    () => rate,
    () => now,
  );
  t.equal(bucket.take(BURST_BYTES), 0, 'the burst goes at once');
  t.equal(bucket.take(1024 * 1024), 1000, 'then 1 MiB at 1 MiB/s waits a second');
  now = 1000;
  t.equal(bucket.take(512 * 1024), 500, 'the debt is paid, then half a second more');
  now = 10_000;
  t.equal(bucket.take(1024), 0, 'refilled, up to the burst');
  rate = 0;
  t.equal(bucket.take(100 * 1024 * 1024), 0, 'no limit');
});

t.test('isLan: loopback, alwaysLocalNets and this machine’s subnets, as Syncthing 1.19', async (t) => {
  for (const address of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) t.ok(isLan(address), address);
  t.notOk(isLan('203.0.113.9'), 'a documentation address is not the LAN');
  t.ok(isLan('203.0.113.9', ['203.0.113.0/24']), 'unless alwaysLocalNets says so');
  t.notOk(isLan('not an address'));
});

t.test('a device’s limit and the global one; the LAN exempt unless limitBandwidthInLan', async (t) => {
  const device = newDeviceId();
  const config = testConfiguration({ devices: [{ deviceID: device, maxSendKbps: 100 }] });
  config.options.maxRecvKbps = 1000;
  const limits = new BandwidthLimits(() => config);
  t.ok(limits.active);
  const wan = limits.forConnection(device, '203.0.113.9');
  t.equal(wan.send(BURST_BYTES), 0);
  t.ok(wan.send(100 * 1024) >= 990, 'the device’s 100 KiB/s: 100 KiB more waits about a second');
  t.equal(wan.receive(BURST_BYTES), 0);
  t.ok(wan.receive(1000 * 1024) >= 990, 'the global 1000 KiB/s');
  // Another service's buckets, full: the WAN connection above left the device's in debt.
  const lan = new BandwidthLimits(() => config).forConnection(device, '127.0.0.1');
  t.equal(lan.send(50 * 1024 * 1024), 0, 'the LAN goes unlimited');
  config.options.limitBandwidthInLan = true;
  t.equal(lan.send(BURST_BYTES), 0);
  t.ok(lan.send(100 * 1024) > 0, 'limited in the LAN too once asked, at once');
  config.options.maxRecvKbps = 0;
  for (const entry of config.devices) entry.maxSendKbps = 0;
  t.notOk(limits.active);
});
