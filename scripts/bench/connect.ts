// From a device being added to it being connected: syncd and Syncthing each add the same Syncthing
// peer (which knows them both, but only as `dynamic`, so the measured side is the one that dials), in
// alternating order, on loopback, through their own REST interfaces, polled every 10 ms. Each round has
// a peer of its own: Syncthing does not dial an address again within a minute of its last dial.
import { setTimeout as sleep } from 'node:timers/promises';
import { startService } from '../../shared/client/testing.ts';
import { pollUntil, startSyncthing } from '../../test/helpers/syncthing.ts';

interface Side {
  name: 'syncd' | 'syncthing';
  id: string;
  call(method: string, path: string, body?: unknown): Promise<unknown>;
}

type Connections = { connections: Record<string, { connected: boolean }> };

/** The milliseconds each side took, round by round. */
export async function connectBench(rounds: number): Promise<Record<Side['name'], number[]>> {
  const teardowns: Array<() => unknown> = [];
  const t = { teardown: (fn: () => unknown) => void teardowns.push(fn) };
  try {
    const other = await startSyncthing(t, 'syncthing');
    const service = await startService();
    teardowns.push(service.stop);
    const syncdId = ((await service.client.status()) as { myID: string }).myID;
    const sides: Side[] = [
      {
        name: 'syncd',
        id: syncdId,
        call: (method, path, body) =>
          service.client.call(
            method,
            path,
            body === undefined ? undefined : JSON.stringify(body),
            'application/json',
          ),
      },
      { name: 'syncthing', id: other.id, call: (method, path, body) => other.call(method, path, body) },
    ];
    const times: Record<Side['name'], number[]> = { syncd: [], syncthing: [] };
    for (let round = 0; round < rounds; round++) {
      const peer = await startSyncthing(t, `peer ${round}`);
      for (const side of sides) {
        await peer.call('POST', '/rest/config/devices', { deviceID: side.id, addresses: ['dynamic'] });
      }
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
        const started = performance.now();
        await side.call('POST', '/rest/config/devices', { deviceID: peer.id, addresses: [peer.listen] });
        await pollUntil(
          `${side.name} connected`,
          async () => {
            const { connections } = (await side.call('GET', '/rest/system/connections')) as Connections;
            return connections[peer.id]?.connected;
          },
          30_000,
          10,
        );
        times[side.name].push(performance.now() - started);
        await side.call('DELETE', `/rest/config/devices/${peer.id}`);
        await peer.until(`${side.name} gone`, async () => {
          const { connections } = await peer.call<Connections>('GET', '/rest/system/connections');
          return connections[side.id]?.connected === false;
        });
        await sleep(500);
      }
      await peer.stop();
    }
    return times;
  } finally {
    for (const fn of teardowns.reverse()) await fn();
  }
}
