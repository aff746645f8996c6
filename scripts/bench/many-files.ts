// Many small files (issue 34): a tree of 100,000 or 1,000,000 files indexed from scratch by syncd and by
// Syncthing, rescanned unchanged, the index's size on disk, syncd's start in that home against a new
// one, and (100,000) the folder sent to a fresh Syncthing by each. Peak memory is each process's own
// high-water mark (VmHWM, reset through /proc/PID/clear_refs before each step): syncd's worker against
// Syncthing's one process, the same measure for both.
import { execFileSync } from 'node:child_process';
import { statfsSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService } from '../../shared/client/testing.ts';
import { pollUntil } from '../../test/helpers/syncthing.ts';
import { median, procStatusKib, untilPong } from './measure.ts';
import { makeTree, rest, type Tree } from './scan.ts';
import { endSession, FOLDER, move, openSession, type Peer, syncdPeer, syncthingPeer } from './sync.ts';
import { syncdInOneHome } from './targets.ts';

/** syncd's figure and Syncthing's, measured in the same run. */
export interface Pair {
  syncd: number;
  syncthing: number;
}

export interface ManyFilesFigures {
  files: number;
  fileBytes: number;
  indexMs: Pair;
  indexPeakMb: Pair;
  rescanMs: Pair;
  indexDiskMb: Pair;
  /** `syncd serve` to its first pong, and to the folder answering with every file, in this home; medians. */
  startToPongMs: number;
  startToFolderMs: number;
  /** The same start in a new home, without folders. */
  emptyStartToPongMs: number;
  /** The folder sent to a fresh Syncthing (syncd: from syncd; syncthing: from Syncthing). */
  sendMs?: Pair;
  sendPeakMb?: number;
  /** CPU seconds of the sender (syncd's worker, Syncthing) and of the receiving Syncthing, each way. */
  sendCpuS?: Record<'syncd' | 'syncthing', { sender: number; receiver: number }>;
}

const FILE_BYTES = 2048;
const SENDER_FOLDER = { ...FOLDER, id: 'bench', type: 'sendonly' };

/** Throws, before anything is written, unless the temporary folder's disk has room for the tree, both
 *  indexes and the copies sent. */
export function checkRoom(files: number, copies: number): void {
  const fs = statfsSync(tmpdir());
  // A 2 KiB file takes a 4 KiB block and an inode; each index a few hundred bytes a file.
  const needBytes = files * (copies + 1) * 4096 + files * 2 * 1024;
  const needInodes = files * (copies + 1) * 1.02;
  const freeBytes = fs.bavail * fs.bsize;
  if (freeBytes < needBytes * 1.5 || fs.ffree < needInodes * 1.5) {
    throw new Error(
      `${tmpdir()} has ${(freeBytes / 2 ** 30).toFixed(1)} GiB and ${fs.ffree} inodes free; ` +
        `${files} files need about ${((needBytes * 1.5) / 2 ** 30).toFixed(1)} GiB and ` +
        `${Math.ceil(needInodes * 1.5)} inodes (set TMPDIR to a larger disk)`,
    );
  }
}

export async function manyFilesBench(
  files: number,
  send: boolean,
  log: (text: string) => void,
): Promise<ManyFilesFigures> {
  checkRoom(files, send ? 2 : 0);
  log(`a tree of ${files} files of ${FILE_BYTES} bytes`);
  const tree = await makeTree(files, 0, 0, FILE_BYTES);
  const session = await openSession();
  const home = await mkdtemp(join(tmpdir(), 'syncd-bench-many-'));
  const emptyHome = await mkdtemp(join(tmpdir(), 'syncd-bench-empty-'));
  session.teardowns.push(
    () => tree.remove(),
    () => rm(home, { recursive: true, force: true }),
    () => rm(emptyHome, { recursive: true, force: true }),
  );
  try {
    const ours = await syncdPeer(session, startService({ home }));
    const theirs = await syncthingPeer(session, 'source');
    const figures: Partial<ManyFilesFigures> = { files, fileBytes: FILE_BYTES };
    const index = { syncd: await indexed(ours, tree, log), syncthing: await indexed(theirs, tree, log) };
    figures.indexMs = { syncd: index.syncd.ms, syncthing: index.syncthing.ms };
    figures.indexPeakMb = { syncd: index.syncd.peakMb, syncthing: index.syncthing.peakMb };
    figures.rescanMs = { syncd: await rescan(ours), syncthing: await rescan(theirs) };
    figures.indexDiskMb = {
      syncd: await sizeMb(home, (name) => name.startsWith('index.sqlite')),
      syncthing: await sizeMb(join(theirs.home, 'index-v0.14.0.db'), () => true),
    };
    if (send) {
      const sendTo = async (sender: Peer, name: string) => {
        log(`${files} files to a fresh Syncthing: from ${name}`);
        const receiver = await syncthingPeer(session, `from-${name}`);
        const pid = await sender.pid();
        await resetPeak(pid);
        const { ms, cpu } = await move(session, sender, receiver, tree, `from-${name}`);
        return { ms, peakMb: await peakMb(pid), cpu };
      };
      const fromSyncd = await sendTo(ours, 'syncd');
      const fromSyncthing = await sendTo(theirs, 'syncthing');
      figures.sendMs = { syncd: fromSyncd.ms, syncthing: fromSyncthing.ms };
      figures.sendPeakMb = fromSyncd.peakMb;
      figures.sendCpuS = { syncd: fromSyncd.cpu, syncthing: fromSyncthing.cpu };
    }
    await ours.service.stop();
    log(`syncd started in the home that indexed ${files} files, and in a new one`);
    await startTimes(syncdInOneHome(emptyHome), 1);
    figures.emptyStartToPongMs = median((await startTimes(syncdInOneHome(emptyHome), 5)).map((t) => t.pong));
    const starts = await startTimes(syncdInOneHome(home), 5, files);
    figures.startToPongMs = median(starts.map((t) => t.pong));
    figures.startToFolderMs = median(starts.map((t) => t.folder));
    return figures as ManyFilesFigures;
  } finally {
    await endSession(session);
  }
}

async function indexed(peer: Peer, tree: Tree, log: (text: string) => void) {
  log(`indexing ${tree.files} files: ${'service' in peer ? 'syncd' : 'syncthing'}`);
  const pid = await peer.pid();
  // What starting cost is not the indexing's.
  await resetPeak(pid);
  execFileSync('sync');
  const started = performance.now();
  await peer.call('POST', '/rest/config/folders', { ...SENDER_FOLDER, path: tree.path });
  await pollUntil(
    `indexing ${tree.files} files`,
    async () => {
      const status = (await peer.call('GET', '/rest/db/status?folder=bench')) as {
        state: string;
        localFiles: number;
      };
      return status.state === 'idle' && status.localFiles === tree.files;
    },
    3_600_000,
    // Each status of a folder being written counts it anew, in both: asked for every 20 ms at a
    // million files, the asking took a core of its own.
    Math.max(20, tree.files / 5000),
  );
  return { ms: performance.now() - started, peakMb: await peakMb(pid) };
}

/** POST /rest/db/scan answers once the scan is done, in both; the median of three. */
async function rescan(peer: Peer): Promise<number> {
  const times = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    await peer.call('POST', '/rest/db/scan?folder=bench');
    times.push(performance.now() - started);
  }
  return median(times);
}

async function startTimes(target: ReturnType<typeof syncdInOneHome>, count: number, files = 0) {
  const times = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const running = await target.start();
    try {
      await untilPong(running, 60_000);
      const pong = performance.now() - started;
      let folder = pong;
      if (files > 0) {
        await pollUntil(
          'the folder served after a start',
          async () => {
            const status = await rest(running, 'GET', '/rest/db/status?folder=bench');
            return status.status === 200 && (status.body as { localFiles: number }).localFiles === files;
          },
          600_000,
          5,
        );
        folder = performance.now() - started;
      }
      times.push({ pong, folder });
    } finally {
      await running.stop();
    }
  }
  return times;
}

async function sizeMb(dir: string, counted: (name: string) => boolean): Promise<number> {
  let bytes = 0;
  for (const name of await readdir(dir)) {
    if (counted(name)) bytes += (await stat(join(dir, name))).size;
  }
  return bytes / 1e6;
}

/** Resets a process's high-water mark of resident memory (proc(5): clear_refs, 5). */
async function resetPeak(pid: number): Promise<void> {
  await writeFile(`/proc/${pid}/clear_refs`, '5');
}

async function peakMb(pid: number): Promise<number> {
  return ((await procStatusKib(pid, 'VmHWM')) * 1024) / 1e6;
}
