// What discovery announces to a global discovery server as options.announceLANAddresses says, in
// process with a real HTTPS server and Discovery as the service makes it; this machine's interfaces
// are given, so that it has a LAN address whatever the host's network.
import t from 'tap';
import { EventLog } from '../../../worker/events/event-log.ts';
import { Discovery } from '../../../worker/discovery/discovery.ts';
import { announcementServer } from '../../helpers/announcement-server.ts';
import { silentLogger } from '../../helpers/app.ts';
import { localConfig, testConfiguration } from '../../helpers/config.ts';
import { newTestDevice } from '../../helpers/device.ts';
import { pollUntil } from '../../helpers/syncthing.ts';

t.test(
  'global discovery leaves the LAN addresses out once announceLANAddresses is false, from its next announcement',
  async (t) => {
    const [server, me] = [await newTestDevice(), await newTestDevice()];
    // Again in a second, so that a change shows soon.
    const { url, announced } = await announcementServer(t, server, 1);
    const { config } = localConfig(
      testConfiguration({
        options: {
          globalAnnounceEnabled: true,
          globalAnnounceServers: [url],
        },
      }),
    );
    const discovery = new Discovery({
      myId: me.id,
      credentials: me,
      config,
      listening: () => ({ 'tcp://0.0.0.0:22000': { bound: 'tcp://0.0.0.0:22000', error: null } }),
      interfaces: () => ({
        eth0: [
          {
            address: '192.168.1.5',
            netmask: '255.255.255.0',
            family: 'IPv4',
            mac: '00:00:00:00:00:00',
            internal: false,
            cidr: '192.168.1.5/24',
          },
        ],
      }),
      announce: { local: false, global: null },
      events: new EventLog(),
      logger: silentLogger(),
      discovered: () => {},
    });
    t.teardown(() => discovery.close());
    await discovery.start();
    await pollUntil('announced', async () => announced.length > 0, 10_000);
    t.same(announced[0], ['tcp://0.0.0.0:22000', 'tcp://192.168.1.5:22000'], 'by default, with the LAN ones');

    await config.change((draft) => {
      draft.options.announceLANAddresses = false;
    });
    const before = announced.length;
    await pollUntil('announced again', async () => announced.length > before, 10_000);
    t.same(announced.at(-1), ['tcp://0.0.0.0:22000'], 'then the WAN addresses alone');
  },
);
