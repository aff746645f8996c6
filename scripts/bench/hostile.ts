// `npm run bench -- --hostile`: what a hostile device costs syncd's worker in memory and in answering
// its REST interface. One service, a device configured to share a folder with it, and the attacks of
// test/process/hostile-peer.test.ts at their full size, one after another: for each, the worker's RSS
// before and at its largest (sampled every 50 ms from /proc), the slowest of the pings sent one after
// another meanwhile, and what became of the connection. The target is docs/trust-model.md's: an
// attack costs the worker at most 100 MB, and every ping is answered by the same worker.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create, toBinary } from '@bufbuild/protobuf';
import { startService } from '../../shared/client/testing.ts';
import { shortIdOf } from '../../shared/device-id.ts';
import { ClusterConfigSchema, RequestSchema } from '../../worker/bep/bep_pb.ts';
import { newTestDevice } from '../../test/helpers/device.ts';
import {
  deletedFilesIndex,
  emptyFilesIndex,
  HostilePeer,
  MessageType,
  rawFrame,
  sha256,
  shareWithHostile,
  watchWorker,
} from '../../test/helpers/hostile-peer.ts';
import { api } from '../../test/helpers/service.ts';
import type { Measure } from './report-table.ts';

const FOLDER = 'shared';
const MiB = 2 ** 20;
const MAX_GROWTH_MB = 100;

/** One row per attack. */
export async function hostileBench(log: (text: string) => void): Promise<Measure[]> {
  const scratch = await mkdtemp(join(tmpdir(), 'syncd-bench-hostile-'));
  const syncd = await startService();
  const rows: Measure[] = [];
  try {
    const folderPath = join(scratch, 'folder');
    await mkdir(folderPath);
    const large = randomBytes(32 * MiB);
    await writeFile(join(folderPath, 'large.bin'), large);
    const setup = await shareWithHostile(syncd, FOLDER, folderPath);

    const measure = async (name: string, attack: () => Promise<string>) => {
      log(name);
      const worker = await syncd.workerPid();
      const watch = watchWorker(syncd, worker);
      let outcome: string;
      try {
        outcome = await attack();
      } catch (error) {
        outcome = `the bench failed: ${(error as Error).message}`;
      } finally {
        await Promise.all(setup.opened.splice(0).map((peer) => peer.close()));
      }
      const figures = await watch.stop();
      const same = (await syncd.workerPid().catch(() => 0)) === worker;
      if (figures.failedPings > 0) outcome += `; ${figures.failedPings} of ${figures.pings} pings failed`;
      if (!same) {
        const exit = [...syncd.logs].reverse().find((line) => line.role === 'supervisor' && line.level >= 40);
        outcome += `; the WORKER WAS REPLACED (${exit?.msg ?? 'no reason logged'})`;
      }
      const growthMb = figures.peakMb - figures.beforeMb;
      const fmt = (n: number) => n.toFixed(0);
      // A legal load, named so, is measured for what it costs: the attacks' target is not its.
      const legal = name.endsWith('(legal)');
      rows.push({
        measure: name,
        figure:
          `+${fmt(growthMb)} MB from ${fmt(figures.beforeMb)} MB, worst ping ${fmt(figures.worstPingMs)} ms; ` +
          outcome,
        ...(legal
          ? {}
          : {
              target: `≤ +${MAX_GROWTH_MB} MB, every ping answered, the same worker`,
              met: growthMb <= MAX_GROWTH_MB && figures.failedPings === 0 && same,
            }),
      });
    };

    const emptyFiles = rawFrame(MessageType.INDEX, emptyFilesIndex(FOLDER, 8_000_000), true);
    await measure('e. 10 unknown devices at once, 63 KB of LZ4 for 16 MB of empty files each', async () => {
      const stranger = await newTestDevice();
      const peers = await Promise.all(
        Array.from({ length: 10 }, () => HostilePeer.connect(setup.listen, stranger)),
      );
      setup.opened.push(...peers);
      for (const peer of peers) peer.sendRaw(emptyFiles);
      const ends = await Promise.all(peers.map((peer) => peer.closedWithin(20_000)));
      return `${ends.filter(Boolean).length} of 10 refused`;
    });

    await measure('f. an Index of 8,000,000 empty files (63 KB of LZ4)', async () => {
      const peer = await setup.connect();
      peer.sendRaw(emptyFiles);
      return outcomeOf(peer);
    });

    await measure(
      'g. 300 connections in a row, each a ClusterConfig with a 20 MB label (78 KB of LZ4)',
      async () => {
        const devices = setup.folder.clusterConfig(setup.syncdId).folders[0]?.devices;
        const offer = create(ClusterConfigSchema, {
          folders: [{ id: 'g-offered', label: 'L'.repeat(20_000_000), devices }],
        });
        const frame = rawFrame(MessageType.CLUSTER_CONFIG, toBinary(ClusterConfigSchema, offer), true);
        let closed = 0;
        let last = '';
        for (let round = 0; round < 300; round++) {
          const peer = await setup.connect(false);
          peer.sendRaw(frame);
          if (await peer.closedWithin(20_000)) closed += 1;
          last = await outcomeOf(peer, 0);
          await Promise.all(setup.opened.splice(0).map((opened) => opened.close()));
        }
        return `${closed} of 300 closed; the last: ${last}`;
      },
    );

    await measure('i. 1,200 Requests for 1 MiB blocks, the answers never read (5 s)', async () => {
      const peer = await setup.connect();
      peer.stopReading();
      for (let id = 1; id <= 1200; id++) {
        const offset = ((id * 7) % 32) * MiB;
        const hash = sha256(large.subarray(offset, offset + MiB));
        const request = { id, folder: FOLDER, name: 'large.bin', offset: BigInt(offset), size: MiB, hash };
        peer.send({ kind: 'Request', body: create(RequestSchema, request) });
      }
      // Nothing to wait for: syncd reads until its answers back up, then holds them.
      await new Promise((resolve) => setTimeout(resolve, 5000));
      const outcome = await outcomeOf(peer, 0);
      return outcome === 'open' ? 'open, its answers held' : outcome;
    });

    await measure('h. an IndexUpdate of 1,000,000 small files (11 MB)', async () => {
      const peer = await setup.connect();
      peer.sendRaw(rawFrame(MessageType.INDEX_UPDATE, deletedFilesIndex(FOLDER, 'm/', 1_000_000)));
      return outcomeOf(peer);
    });

    await measure('h. 40 IndexUpdates of 10,000 files each, back to back (legal)', async () => {
      const types = 'events=RemoteIndexUpdated';
      const mark = (await api<Array<{ id: number }>>(syncd, 'GET', `/rest/events?timeout=0&${types}`)).at(-1);
      const peer = await setup.connect();
      const started = performance.now();
      const version = { id: shortIdOf(setup.device.id), value: 1n };
      for (let batch = 0; batch < 40; batch++) {
        const body = deletedFilesIndex(FOLDER, `h${batch}/`, 10_000, version);
        peer.sendRaw(rawFrame(MessageType.INDEX_UPDATE, body, true));
      }
      let recorded = 0;
      let since = mark?.id ?? 0;
      while (recorded < 40 && !peer.closed && performance.now() - started < 300_000) {
        const events = await api<Array<{ id: number }>>(
          syncd,
          'GET',
          `/rest/events?since=${since}&timeout=5&${types}`,
        );
        recorded += events.length;
        since = events.at(-1)?.id ?? since;
      }
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      return `${recorded} of 40 recorded in ${seconds} s; ${await outcomeOf(peer, 0)}`;
    });
  } finally {
    await syncd.stop();
    await rm(scratch, { recursive: true, force: true });
  }
  return rows;
}

/** Closed by syncd within `ms` (and its Close's reason), or still open. */
async function outcomeOf(peer: HostilePeer, ms = 20_000): Promise<string> {
  const end = await peer.closedWithin(ms);
  if (!end) return 'open';
  return `closed: ${end.reason ?? 'no Close sent'}`;
}
