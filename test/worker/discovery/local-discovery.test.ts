import { createSocket } from 'node:dgram';
import { create, toBinary } from '@bufbuild/protobuf';
import getPort from 'get-port';
import t from 'tap';
import { rawDeviceId } from '../../../shared/device-id.ts';
import { BEP_MAGIC } from '../../../worker/bep/frames.ts';
import { DiscoveryCache } from '../../../worker/discovery/discovery-cache.ts';
import { AnnounceSchema } from '../../../worker/discovery/local_pb.ts';
import { LocalDiscovery, readAnnouncement, withSource } from '../../../worker/discovery/local-discovery.ts';
import { recordingLogger } from '../../helpers/app.ts';
import { newDeviceId } from '../../helpers/config.ts';
import { pollUntil } from '../../helpers/syncthing.ts';

function packet(device: string, addresses: string[], magic = BEP_MAGIC): Buffer {
  const body = toBinary(
    AnnounceSchema,
    create(AnnounceSchema, { id: rawDeviceId(device), addresses, instanceId: 7n }),
  );
  const out = Buffer.alloc(4 + body.length);
  out.writeUInt32BE(magic, 0);
  out.set(body, 4);
  return out;
}

t.test('announcements are read as Syncthing writes them; anything else is not one', async (t) => {
  const device = newDeviceId();
  t.match(readAnnouncement(packet(device, ['tcp://0.0.0.0:22000'])), {
    device,
    addresses: ['tcp://0.0.0.0:22000'],
    instanceId: 7n,
  });
  t.equal(readAnnouncement(packet(device, [], 0x7d79bc40)), undefined, "v0.13's magic");
  t.equal(readAnnouncement(Buffer.from('2ea7d90b0aff', 'hex')), undefined, 'malformed');
  t.equal(readAnnouncement(Buffer.from('2ea7d90b0a0101', 'hex')), undefined, 'an ID of 1 byte');
  t.equal(readAnnouncement(Buffer.alloc(9000)), undefined, 'too large');
});

t.test('an unspecified host becomes the source; what cannot be dialed is left out', async (t) => {
  const from = { address: '10.231.1.2', family: 'IPv4' };
  t.same(withSource('tcp://0.0.0.0:22000', from), ['tcp://10.231.1.2:22000']);
  t.same(withSource('tcp://:22001', from), ['tcp://10.231.1.2:22001']);
  t.same(withSource('tcp://192.0.2.9:22000', from), ['tcp://192.0.2.9:22000']);
  t.same(withSource('tcp://0.0.0.0:0', from), [], "Syncthing's placeholder");
  t.same(withSource('quic://0.0.0.0:22000', from), [], 'QUIC');
  t.same(
    withSource('tcp://0.0.0.0:22000', { address: 'fe80::1%veth0', family: 'IPv6' }),
    [],
    'a zoned source',
  );
});

t.test(
  'heard on its port: a device found; its own announcement ignored; a taken port reported',
  async (t) => {
    const port = await getPort({ host: '127.0.0.1' });
    const [me, other] = [newDeviceId(), newDeviceId()];
    const found: Array<[string, string[]]> = [];
    const { logger, warnings } = recordingLogger();
    const discovery = new LocalDiscovery({
      myId: me,
      port,
      multicastAddress: '[ff12::8384]:21027',
      addresses: () => [],
      found: (device, addresses) => found.push([device, addresses]),
      logger,
    });
    // Its own announcements go to no interface here (the test sends to loopback itself).
    discovery.announce = () => {};
    await discovery.start();
    t.teardown(() => discovery.close());
    const sender = createSocket('udp4');
    t.teardown(() => sender.close());
    const send = (buffer: Buffer) =>
      new Promise((resolve) => sender.send(buffer, port, '127.0.0.1', resolve));
    await send(packet(me, ['tcp://0.0.0.0:1']));
    await send(Buffer.from('not an announcement'));
    await send(packet(other, ['tcp://0.0.0.0:22000', 'tcp://192.0.2.1:22000']));
    await pollUntil('the other device found', async () => found.length > 0, 5000);
    t.same(found, [[other, ['tcp://127.0.0.1:22000', 'tcp://192.0.2.1:22000']]]);

    const second = new LocalDiscovery({
      myId: other,
      port,
      multicastAddress: '[ff12::8384]:21027',
      addresses: () => [],
      found: () => {},
      logger,
    });
    await second.start();
    t.teardown(() => second.close());
    t.match(second.status['IPv4 local'], { error: new RegExp(`listen udp4 :${port}: .*EADDRINUSE`) });
    t.ok(
      warnings.some((warning) => /cannot listen on UDP port/.test(warning)),
      'and a warning',
    );
  },
);

t.test(
  'the cache keeps each source apart, forgets local entries after their time, and keeps hints',
  async (t) => {
    let now = 1000;
    const cache = new DiscoveryCache(() => now);
    const device = newDeviceId();
    t.ok(cache.set(device, 'local', ['tcp://10.0.0.1:22000'], 90_000), 'new');
    t.notOk(cache.set(device, 'local', ['tcp://10.0.0.1:22000'], 90_000), 'nothing new');
    t.ok(cache.set(device, 'hint', ['tcp://10.0.0.2:22000']));
    t.same(cache.addresses(device), ['tcp://10.0.0.2:22000', 'tcp://10.0.0.1:22000'], 'hints first');
    now += 90_001;
    t.same(
      cache.snapshot(),
      { [device]: { addresses: ['tcp://10.0.0.2:22000'] } },
      'the local entry expired',
    );
  },
);
