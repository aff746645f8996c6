// Moving a folder between devices (issue 13): the same tree (one large file and thousands of small
// ones) from a Syncthing to another Syncthing, from a Syncthing to syncd, and from syncd to a Syncthing,
// on loopback, measured from the moment the receiver shares the folder until its GET /rest/db/status
// says it has every file and needs nothing (polled every 50 ms); each direction `rounds` times, to a
// new receiver each time, and the median taken (single runs moved by a factor of two here).
// syncd's worker RSS is sampled while it pulls.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { SyncdClient } from '../../shared/client/client.ts';
import { type Service, startService } from '../../shared/client/testing.ts';
import { pollUntil, startSyncthing } from '../../test/helpers/syncthing.ts';
import { cpuSeconds, median, procStatusKib } from './measure.ts';
import type { Tree } from './scan.ts';

export interface Peer {
  id: string;
  /** Syncthing's process, syncd's worker. */
  pid(): Promise<number>;
  /** Where it keeps its configuration and index. */
  home: string;
  listen: string;
  call(method: string, path: string, body?: unknown): Promise<unknown>;
}

type Status = { localFiles: number; needTotalItems: number; state: string };

export const FOLDER = { fsWatcherEnabled: false, rescanIntervalS: 3600 };

/** Milliseconds for each direction, the median of `rounds` (each run listed), and syncd's worker RSS. */
export interface SyncFigures {
  syncthing: number;
  toSyncd: number;
  fromSyncd: number;
  runs: Record<'syncthing' | 'toSyncd' | 'fromSyncd', number[]>;
  /** The largest RSS of syncd's worker while it pulled (MB). */
  pullRssMb: number;
  /** CPU seconds of each transfer's sender and receiver, median over the rounds. */
  cpu: Record<'syncthing' | 'toSyncd' | 'fromSyncd', { sender: number; receiver: number }>;
}

/** What a run started, ended in reverse order by `end`; and where receivers keep their folders. */
export interface Session {
  teardowns: Array<() => unknown>;
  scratch: string;
}

export async function openSession(): Promise<Session> {
  const scratch = await mkdtemp(join(tmpdir(), 'syncd-bench-sync-'));
  return { teardowns: [() => rm(scratch, { recursive: true, force: true })], scratch };
}

export async function endSession(session: Session): Promise<void> {
  for (const fn of session.teardowns.reverse()) await fn();
}

export async function syncthingPeer(session: Session, name: string): Promise<Peer> {
  const peer = await startSyncthing({ teardown: (fn) => void session.teardowns.push(fn) }, name);
  return {
    id: peer.id,
    pid: async () => peer.pid,
    home: peer.home,
    listen: peer.listen,
    call: (m, p, b) => peer.call(m, p, b),
  };
}

export async function syncdPeer(
  session: Session,
  starting: Service | Promise<Service> = startService(),
): Promise<Peer & { service: Service }> {
  const service = await starting;
  session.teardowns.push(service.stop);
  // A scan asked for answers once it is done: minutes at a million files, past the client's 10 s.
  const client = new SyncdClient({ address: service.url, apiKey: service.apiKey, timeoutMs: 3_600_000 });
  const status = (await service.client.status()) as unknown as {
    myID: string;
    connectionServiceStatus: Record<string, { lanAddresses: string[] }>;
  };
  return {
    id: status.myID,
    pid: () => service.workerPid(),
    home: service.home,
    listen: Object.values(status.connectionServiceStatus)[0]?.lanAddresses[0] ?? '',
    call: (m, p, b) => client.call(m, p, b === undefined ? undefined : JSON.stringify(b), 'application/json'),
    service,
  };
}

/**
 * The sender shares the folder at `path` (scanned first; added as `bench` when it has none there), the
 * receiver an empty folder of its own under the session's scratch folder, named `id`; the milliseconds
 * until the receiver has all `files`.
 */
export async function move(
  session: Session,
  sender: Peer,
  receiver: Peer,
  tree: { path: string; files: number },
  id: string,
  sample?: () => Promise<void>,
  /** Checked at each poll: a reason given ends the wait with it as the error. */
  stopIf?: () => Promise<string | undefined>,
): Promise<Moved> {
  await sender.call('POST', '/rest/config/devices', { deviceID: receiver.id, addresses: [receiver.listen] });
  await receiver.call('POST', '/rest/config/devices', { deviceID: sender.id, addresses: [sender.listen] });
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
  const path = join(session.scratch, id);
  await mkdir(join(path, '.stfolder'), { recursive: true });
  // What earlier transfers wrote is flushed first: the kernel's writeback of it (gigabytes after a few
  // rounds) would otherwise fall into this transfer, whichever direction it is.
  execFileSync('sync');
  const pids = [await sender.pid(), await receiver.pid()];
  const cpuBefore = await Promise.all(pids.map(cpuSeconds));
  const started = performance.now();
  await receiver.call('POST', '/rest/config/folders', {
    id: 'bench',
    path,
    devices: [{ deviceID: sender.id }],
    ...FOLDER,
  });
  let stopped: string | undefined;
  await pollUntil(
    `${id}: the receiver in sync`,
    async () => {
      stopped = await stopIf?.();
      if (stopped) return true;
      await sample?.();
      const status = (await receiver.call('GET', '/rest/db/status?folder=bench')) as Status;
      return status.localFiles === tree.files && status.needTotalItems === 0;
    },
    600_000,
    50,
  );
  if (stopped) throw new Error(`${id}: ${stopped}`);
  const ms = performance.now() - started;
  const cpuAfter = await Promise.all(pids.map(cpuSeconds));
  const spent = (i: number) => (cpuAfter[i] as number) - (cpuBefore[i] as number);
  return { ms, cpu: { sender: spent(0), receiver: spent(1) } };
}

/** A transfer's milliseconds, and the CPU seconds the sender (syncd: its worker) and the receiver spent. */
export interface Moved {
  ms: number;
  cpu: { sender: number; receiver: number };
}

/**
 * The largest RSS of syncd's worker, sampled at each call from /proc: asking the service itself
 * (GET /rest/system/status, every 50 ms) added work to the process measured, and to no Syncthing.
 */
function rssSampler(peer: { service: Service }): { sample: () => Promise<void>; largestMb: () => number } {
  let largest = 0;
  let pid: Promise<number> | undefined;
  return {
    sample: async () => {
      pid ??= peer.service.workerPid();
      const kib = await procStatusKib(await pid, 'VmRSS');
      largest = Math.max(largest, (kib * 1024) / 1e6);
    },
    largestMb: () => largest,
  };
}

export async function syncBench(tree: Tree, rounds = 3): Promise<SyncFigures> {
  const session = await openSession();
  try {
    const source = await syncthingPeer(session, 'source');
    const syncdSource = await syncdPeer(session);
    const runs: SyncFigures['runs'] = { syncthing: [], toSyncd: [], fromSyncd: [] };
    const cpus: Record<keyof SyncFigures['runs'], Moved['cpu'][]> = {
      syncthing: [],
      toSyncd: [],
      fromSyncd: [],
    };
    let pullRssMb = 0;
    const directions: Record<keyof SyncFigures['runs'], (round: number) => Promise<Moved>> = {
      syncthing: async (round) =>
        move(
          session,
          source,
          await syncthingPeer(session, `receiver-${round}`),
          tree,
          `to-syncthing-${round}`,
        ),
      toSyncd: async (round) => {
        const receiver = await syncdPeer(session);
        const rss = rssSampler(receiver);
        const moved = await move(session, source, receiver, tree, `to-syncd-${round}`, rss.sample);
        pullRssMb = Math.max(pullRssMb, rss.largestMb());
        return moved;
      },
      fromSyncd: async (round) =>
        move(
          session,
          syncdSource,
          await syncthingPeer(session, `from-syncd-${round}`),
          tree,
          `from-syncd-${round}`,
        ),
    };
    // Each round in another order: transfers took longer the later they came in a run (in one of three
    // rounds, about 3 s in the first, 3.5 to 4 s in the second, 4 to 5.4 s in the third, in every
    // direction; why is not known), and a fixed order put the last place on one direction.
    const order = Object.keys(directions) as Array<keyof SyncFigures['runs']>;
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < order.length; i++) {
        const direction = order[(round + i) % order.length] as keyof SyncFigures['runs'];
        const moved = await directions[direction](round);
        runs[direction].push(moved.ms);
        cpus[direction].push(moved.cpu);
      }
    }
    return {
      syncthing: median(runs.syncthing),
      toSyncd: median(runs.toSyncd),
      fromSyncd: median(runs.fromSyncd),
      runs,
      pullRssMb,
      cpu: {
        syncthing: medianCpu(cpus.syncthing),
        toSyncd: medianCpu(cpus.toSyncd),
        fromSyncd: medianCpu(cpus.fromSyncd),
      },
    };
  } finally {
    await endSession(session);
  }
}

const medianCpu = (list: Moved['cpu'][]) => ({
  sender: median(list.map((cpu) => cpu.sender)),
  receiver: median(list.map((cpu) => cpu.receiver)),
});

/** A file larger than the memory syncd may use, moved to syncd and from it (see memoryBench). */
export interface MemoryFigures {
  fileMiB: number;
  /** The memory cgroup's limit on syncd's processes; undefined where no cgroup could be made. */
  limitMiB: number | undefined;
  toSyncdMs: number;
  fromSyncdMs: number;
  /** The largest RSS syncd's worker reported, pulling and serving (MB). */
  pullRssMb: number;
  serveRssMb: number;
  /** The cgroup's largest charge, page cache included (MB): what shows the limit was reached. */
  cgroupPeakMb: number | undefined;
  /** Processes the kernel killed for memory in the cgroup, and whether the worker was replaced. */
  oomKills: number;
  workerReplaced: boolean;
  /** Every copy's SHA-256 equal to the original's. */
  intact: boolean;
  /** Why a transfer did not end, if one did not. */
  failure?: string;
}

/**
 * One file of `fileMiB` moved from a Syncthing to syncd, then from that syncd to a second Syncthing,
 * with syncd's supervisor and worker in a memory cgroup limited to `limitMiB` (less than the file):
 * streamed, the transfer fits; buffered whole, the kernel would kill the worker. Where no cgroup can be
 * made (cgroup v1's memory controller, as root), the RSS is still reported.
 */
export async function memoryBench(tree: Tree, limitMiB: number): Promise<MemoryFigures> {
  const session = await openSession();
  const limit = await memoryLimit(limitMiB);
  if (limit) session.teardowns.unshift(limit.remove);
  try {
    const source = await syncthingPeer(session, 'source');
    // Started from inside the cgroup, so that all its memory counts: a process moved in later would
    // leave behind what it held before (this kernel moves no charges). startService spawns before it
    // first waits when given a home, so this process is in the cgroup only for that moment.
    const home = await mkdtemp(join(tmpdir(), 'syncd-bench-memory-'));
    session.teardowns.push(() => rm(home, { recursive: true, force: true }));
    const starting = limit ? await limit.within(() => startService({ home })) : startService({ home });
    const syncd = await syncdPeer(session, starting);
    const workerPid = await syncd.service.workerPid();
    if (limit) await limit.holds([syncd.service.supervisorPid ?? 0, workerPid]);
    // A process killed for memory is the outcome, not something to wait out.
    const killed = async () =>
      (await limit?.oomKills()) ? "the kernel killed a process of syncd's for memory" : undefined;
    const pulling = rssSampler(syncd);
    const serving = rssSampler(syncd);
    const figures: MemoryFigures = {
      fileMiB: tree.bytes / 2 ** 20,
      limitMiB: limit ? limitMiB : undefined,
      toSyncdMs: Number.NaN,
      fromSyncdMs: Number.NaN,
      pullRssMb: 0,
      serveRssMb: 0,
      cgroupPeakMb: undefined,
      oomKills: 0,
      workerReplaced: false,
      intact: false,
    };
    try {
      figures.toSyncdMs = (await move(session, source, syncd, tree, 'to-syncd', pulling.sample, killed)).ms;
      const copy = { path: join(session.scratch, 'to-syncd'), files: tree.files };
      const receiver = await syncthingPeer(session, 'from-syncd');
      figures.fromSyncdMs = (
        await move(session, syncd, receiver, copy, 'from-syncd', serving.sample, killed)
      ).ms;
      // The tree's files (the folder also holds Syncthing's marker, .stfolder).
      const names = (await readdir(tree.path, { withFileTypes: true }))
        .filter((entry) => entry.isFile())
        .map((entry) => entry.name);
      const digests = await Promise.all(
        ['', 'to-syncd', 'from-syncd'].flatMap((folder) =>
          names.map((name) => sha256(folder ? join(session.scratch, folder, name) : join(tree.path, name))),
        ),
      );
      figures.intact = digests.every((digest, i) => digest === digests[i % names.length]);
    } catch (error) {
      figures.failure = (error as Error).message;
    }
    figures.pullRssMb = pulling.largestMb();
    figures.serveRssMb = serving.largestMb();
    figures.cgroupPeakMb = await limit?.peakMb();
    figures.oomKills = (await limit?.oomKills()) ?? 0;
    figures.workerReplaced = (await syncd.service.workerPid().catch(() => undefined)) !== workerPid;
    return figures;
  } finally {
    await endSession(session);
  }
}

async function sha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

interface MemoryLimit {
  /** Calls `spawn` with this process in the cgroup, and leaves it as `spawn` returns: what it started stays. */
  within<T>(spawn: () => T): Promise<T>;
  /** Throws unless every one of these processes is in the cgroup. */
  holds(pids: number[]): Promise<void>;
  oomKills(): Promise<number>;
  peakMb(): Promise<number>;
  remove(): Promise<void>;
}

// cgroup v1's memory controller, where this machine has it.
const CGROUP_V1_MEMORY = '/sys/fs/cgroup/memory';

async function memoryLimit(limitMiB: number): Promise<MemoryLimit | undefined> {
  const dir = join(CGROUP_V1_MEMORY, `syncd-bench-${process.pid}`);
  try {
    await mkdir(dir);
    await writeFile(join(dir, 'memory.limit_in_bytes'), String(limitMiB * 2 ** 20));
  } catch (error) {
    process.stderr.write(`no memory cgroup (${(error as Error).message}): syncd runs without a limit\n`);
    await rmdir(dir).catch(() => {});
    return undefined;
  }
  // Where this process is: it goes back there after starting the service, and so does what is left
  // of the service before the cgroup is removed.
  const own = (await readFile('/proc/self/cgroup', 'utf8')).match(/^\d+:memory:(.*)$/m)?.[1] ?? '/';
  const home = join(CGROUP_V1_MEMORY, own, 'cgroup.procs');
  return {
    within: async (spawn) => {
      await writeFile(join(dir, 'cgroup.procs'), String(process.pid));
      try {
        return spawn();
      } finally {
        await writeFile(home, String(process.pid));
      }
    },
    holds: async (pids) => {
      const inside = (await readFile(join(dir, 'cgroup.procs'), 'utf8')).split('\n').map(Number);
      const outside = pids.filter((pid) => !inside.includes(pid));
      if (outside.length > 0) throw new Error(`processes ${outside.join(', ')} are not in ${dir}`);
    },
    oomKills: async () =>
      Number((await readFile(join(dir, 'memory.oom_control'), 'utf8')).match(/oom_kill (\d+)/)?.[1] ?? 0),
    peakMb: async () => Number(await readFile(join(dir, 'memory.max_usage_in_bytes'), 'utf8')) / 1e6,
    remove: async () => {
      const left = (await readFile(join(dir, 'cgroup.procs'), 'utf8')).split('\n').filter(Boolean);
      for (const pid of left) await writeFile(home, pid).catch(() => {});
      await rmdir(dir);
    },
  };
}
