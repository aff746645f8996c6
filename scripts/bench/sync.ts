// Moving a folder between devices (issue 13): the same tree (one large file and thousands of small
// ones) from a Syncthing to another Syncthing, from a Syncthing to syncd, and from syncd to a Syncthing,
// on loopback, measured from the moment the receiver shares the folder until its GET /rest/db/status
// says it has every file and needs nothing (polled every 50 ms); each direction `rounds` times, to a
// new receiver each time, and the median taken (single runs moved by a factor of two here).
// syncd's worker RSS is sampled while it pulls.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService } from '../../shared/client/testing.ts';
import { pollUntil, startSyncthing } from '../../test/helpers/syncthing.ts';
import type { Tree } from './scan.ts';

interface Peer {
  id: string;
  listen: string;
  call(method: string, path: string, body?: unknown): Promise<unknown>;
}

type Status = { localFiles: number; needTotalItems: number; state: string };

const FOLDER = { fsWatcherEnabled: false, rescanIntervalS: 3600 };

/** Milliseconds for each direction, the median of `rounds` (each run listed), and syncd's worker RSS. */
export interface SyncFigures {
  syncthing: number;
  toSyncd: number;
  fromSyncd: number;
  runs: Record<'syncthing' | 'toSyncd' | 'fromSyncd', number[]>;
  /** The largest RSS of syncd's worker while it pulled (MB). */
  pullRssMb: number;
}

export async function syncBench(tree: Tree, rounds = 3): Promise<SyncFigures> {
  const teardowns: Array<() => unknown> = [];
  const t = { teardown: (fn: () => unknown) => void teardowns.push(fn) };
  const scratch = await mkdtemp(join(tmpdir(), 'syncd-bench-sync-'));
  teardowns.push(() => rm(scratch, { recursive: true, force: true }));
  try {
    const syncthingPeer = async (name: string): Promise<Peer> => {
      const peer = await startSyncthing(t, name);
      return { id: peer.id, listen: peer.listen, call: (m, p, b) => peer.call(m, p, b) };
    };
    const syncdPeer = async (): Promise<Peer> => {
      const service = await startService();
      teardowns.push(service.stop);
      const status = (await service.client.status()) as unknown as {
        myID: string;
        connectionServiceStatus: Record<string, { lanAddresses: string[] }>;
      };
      return {
        id: status.myID,
        listen: Object.values(status.connectionServiceStatus)[0]?.lanAddresses[0] ?? '',
        call: (m, p, b) =>
          service.client.call(m, p, b === undefined ? undefined : JSON.stringify(b), 'application/json'),
      };
    };
    /** The sender shares the tree (scanned first), the receiver an empty folder; the time until it has all. */
    const move = async (
      sender: Peer,
      receiver: Peer,
      id: string,
      sample?: () => Promise<void>,
    ): Promise<number> => {
      await sender.call('POST', '/rest/config/devices', {
        deviceID: receiver.id,
        addresses: [receiver.listen],
      });
      await receiver.call('POST', '/rest/config/devices', {
        deviceID: sender.id,
        addresses: [sender.listen],
      });
      // One folder on each sender, shared with each receiver in turn.
      const existing = (await sender.call('GET', '/rest/config/folders')) as Array<{
        id: string;
        path: string;
        devices: unknown[];
      }>;
      const folder = existing.find((entry) => entry.path === tree.path);
      if (folder) {
        await sender.call('PATCH', `/rest/config/folders/${folder.id}`, {
          devices: [...folder.devices, { deviceID: receiver.id }],
        });
      } else {
        await sender.call('POST', '/rest/config/folders', {
          id: 'bench',
          path: tree.path,
          type: 'sendonly',
          devices: [{ deviceID: receiver.id }],
          ...FOLDER,
        });
      }
      await pollUntil(
        `${id}: the sender's scan`,
        async () => {
          const status = (await sender.call('GET', '/rest/db/status?folder=bench')) as Status;
          return status.state === 'idle' && status.localFiles === tree.files;
        },
        600_000,
      );
      const path = join(scratch, id);
      await mkdir(join(path, '.stfolder'), { recursive: true });
      const started = performance.now();
      await receiver.call('POST', '/rest/config/folders', {
        id: 'bench',
        path,
        devices: [{ deviceID: sender.id }],
        ...FOLDER,
      });
      await pollUntil(
        `${id}: the receiver in sync`,
        async () => {
          await sample?.();
          const status = (await receiver.call('GET', '/rest/db/status?folder=bench')) as Status;
          return status.localFiles === tree.files && status.needTotalItems === 0;
        },
        600_000,
        50,
      );
      return performance.now() - started;
    };
    const source = await syncthingPeer('source');
    const syncdSource = await syncdPeer();
    const runs: SyncFigures['runs'] = { syncthing: [], toSyncd: [], fromSyncd: [] };
    let pullRssMb = 0;
    for (let round = 0; round < rounds; round++) {
      runs.syncthing.push(
        await move(source, await syncthingPeer(`receiver-${round}`), `to-syncthing-${round}`),
      );
      const receiver = await syncdPeer();
      const sample = async () => {
        const status = (await receiver.call('GET', '/rest/system/status')) as { memory?: { rss?: number } };
        pullRssMb = Math.max(pullRssMb, (status.memory?.rss ?? 0) / 1e6);
      };
      runs.toSyncd.push(await move(source, receiver, `to-syncd-${round}`, sample));
      runs.fromSyncd.push(
        await move(syncdSource, await syncthingPeer(`from-syncd-${round}`), `from-syncd-${round}`),
      );
    }
    const median = (values: number[]) =>
      [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
    return {
      syncthing: median(runs.syncthing),
      toSyncd: median(runs.toSyncd),
      fromSyncd: median(runs.fromSyncd),
      runs,
      pullRssMb,
    };
  } finally {
    for (const fn of teardowns.reverse()) await fn();
  }
}
