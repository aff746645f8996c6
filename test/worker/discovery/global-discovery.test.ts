import { createServer } from 'node:https';
import t from 'tap';
import {
  DEFAULT_DISCOVERY_SERVERS,
  discoveryServers,
  GlobalDiscovery,
} from '../../../worker/discovery/global-discovery.ts';
import { announcementServer } from '../../helpers/announcement-server.ts';
import { recordingLogger } from '../../helpers/app.ts';
import { newDeviceId } from '../../helpers/config.ts';
import { newTestDevice } from '../../helpers/device.ts';
import { pollUntil } from '../../helpers/syncthing.ts';

t.test(
  'the servers of options.globalAnnounceServers: default, pins and limits; malformed ones named',
  async (t) => {
    const id = newDeviceId();
    const { servers, problems } = discoveryServers([
      'default',
      `https://10.0.0.1:8443/v2/?id=${id}&noannounce`,
      'http://x/',
      'nonsense',
    ]);
    t.equal(servers.length, DEFAULT_DISCOVERY_SERVERS.length + 1);
    t.match(servers.at(-1), { id, announce: false, lookup: true, insecure: false });
    t.match(problems, [/http:\/\/x\/: a discovery server is reached over https/, /nonsense: not a URL/]);
  },
);

t.test('a server whose certificate is not the device its URL pins is refused, with the reason', async (t) => {
  const [server, impostor, me] = [await newTestDevice(), await newTestDevice(), await newTestDevice()];
  const seen: string[] = [];
  const https = createServer({ cert: impostor.cert, key: impostor.key }, (request, response) => {
    seen.push(`${request.method} ${request.url}`);
    if (request.method === 'GET') {
      response
        .writeHead(200, { 'Content-Type': 'application/json' })
        .end('{"addresses":["tcp://192.0.2.1:22000"]}');
    } else response.writeHead(204, { 'Reannounce-After': '1800' }).end();
  });
  await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => https.close(resolve)));
  const port = (https.address() as { port: number }).port;
  const { logger } = recordingLogger();
  const make = (pin: string) =>
    new GlobalDiscovery({
      servers: discoveryServers([`https://127.0.0.1:${port}/v2/?id=${pin}`]).servers,
      credentials: me,
      addresses: () => ['tcp://0.0.0.0:22000'],
      logger,
    });
  const pinned = make(server.id);
  t.same(await pinned.lookup(newDeviceId()), [], 'nothing taken from the impostor');
  t.match(Object.values(pinned.status)[0], {
    error: new RegExp(`certificate is ${impostor.id}, not the ${server.id}`),
  });

  const right = make(impostor.id);
  t.same(await right.lookup(newDeviceId()), ['tcp://192.0.2.1:22000'], 'the pinned server is believed');
  right.start();
  t.teardown(() => right.close());
  await pollUntil('announced', async () => seen.some((line) => line.startsWith('POST')));
  t.same(Object.values(right.status)[0], { error: null });
});

t.test('changed addresses (a relay joined) are announced again within seconds', async (t) => {
  const [server, me] = [await newTestDevice(), await newTestDevice()];
  const { url, announced } = await announcementServer(t, server, 1800);
  const addresses = ['tcp://0.0.0.0:22000'];
  const discovery = new GlobalDiscovery({
    servers: discoveryServers([url]).servers,
    credentials: me,
    addresses: () => [...addresses],
    logger: recordingLogger().logger,
    watchMs: 100,
  });
  t.teardown(() => discovery.close());
  discovery.start();
  await pollUntil('announced', async () => announced.length === 1, 10_000);
  addresses.push('relay://192.0.2.9:22067/?id=X');
  await pollUntil('announced again', async () => announced.length === 2, 10_000);
  t.same(announced[1], addresses, 'with the relay');
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal(announced.length, 2, 'and not again while nothing changes');
});
