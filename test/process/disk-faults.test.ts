// Full disks and files changed behind the index's back, with a real Syncthing on the other side:
// syncd stops what it cannot do, says why, never crashes, and goes on by itself once it can. Small
// disks are tmpfs mounts made (as root) and removed by each test. Every file is checked by SHA-256.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { fileTree } from '../helpers/file-tree.ts';
import t, { type Test } from 'tap';
import { api, call, startService } from '../helpers/service.ts';
import { hasSyncthing, NO_SYNCTHING, pollUntil, startSyncthing } from '../helpers/syncthing.ts';

const skip = !hasSyncthing
  ? NO_SYNCTHING
  : process.getuid?.() !== 0
    ? 'mounting a small disk (tmpfs) needs root'
    : false;

/** A tmpfs of `mib` MiB, unmounted and removed when the test ends. */
async function smallDisk(t: Test, mib: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'syncd-small-disk-'));
  await execa('mount', ['-t', 'tmpfs', '-o', `size=${mib}m`, 'tmpfs', dir]);
  t.teardown(async () => {
    // Lazily: a process still holding a file there lets go of it when it ends.
    await execa('umount', ['-l', dir]).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Writes zeros into `path` until the disk has no room left. */
async function fill(path: string): Promise<void> {
  await execa('dd', ['if=/dev/zero', `of=${path}`, 'bs=64k'], { reject: false });
}

/** Every file under `root` but the folder's own and temporaries, with its SHA-256 (first 12 digits). */
const tree = (root: string) =>
  fileTree(root, (name) => name.startsWith('.st') || /(^|\/)\.syncthing\./.test(name));

/** syncd on `home`, and a Syncthing, sharing folder `id`: `mine` on syncd (with `folder` settings), `theirs`. */
async function paired(
  t: Test,
  options: { home?: string; id: string; mine: string; theirs: string; folder?: object; paused?: boolean },
) {
  const syncd = await startService(t, {
    ...(options.home ? { home: options.home } : {}),
    args: ['--sync-address', 'tcp://127.0.0.1:0'],
  });
  const status = await api<{
    myID: string;
    connectionServiceStatus: Record<string, { lanAddresses: string[] }>;
  }>(syncd, 'GET', '/rest/system/status');
  const listen = Object.values(status.connectionServiceStatus)[0]?.lanAddresses[0] ?? '';
  const syncthing = await startSyncthing(t);
  await syncthing.call('PATCH', '/rest/config/options', { reconnectionIntervalS: 2 });
  await syncthing.call('POST', '/rest/config/devices', { deviceID: status.myID, addresses: [listen] });
  await syncthing.call('POST', '/rest/config/folders', {
    id: options.id,
    path: options.theirs,
    devices: [{ deviceID: status.myID }],
  });
  await api(syncd, 'PATCH', '/rest/config/options', { reconnectionIntervalS: 2 });
  await api(syncd, 'POST', '/rest/config/devices', {
    deviceID: syncthing.id,
    addresses: [syncthing.listen],
    paused: options.paused ?? false,
  });
  await api(syncd, 'POST', '/rest/config/folders', {
    id: options.id,
    path: options.mine,
    devices: [{ deviceID: syncthing.id }],
    ...options.folder,
  });
  return { syncd, syncthing, myID: status.myID };
}

const folderStatus = (syncd: Parameters<typeof api>[0], id: string) =>
  api<{ state: string; error?: string; pullErrors: number; needTotalItems: number }>(
    syncd,
    'GET',
    `/rest/db/status?folder=${id}`,
  );

t.test(
  'a full home disk stops the folders with Syncthing’s words, never the worker; they go on once freed',
  { skip },
  async (t) => {
    const home = await smallDisk(t, 16);
    const dir = t.testdir({ theirs: { '.stfolder': {}, 'a.txt': 'before\n' }, mine: {} });
    const [theirs, mine] = [join(dir, 'theirs'), join(dir, 'mine')];
    const { syncd, syncthing } = await paired(t, { home: join(home, 'home'), id: 'h', mine, theirs });
    await pollUntil('a.txt on syncd', () => readFile(join(mine, 'a.txt'), 'utf8'), 60_000);
    const worker = await syncd.workerPid();

    await fill(join(home, 'fill'));
    await writeFile(join(theirs, 'b.txt'), 'while the home was full\n');
    await syncthing.call('POST', '/rest/db/scan?folder=h');
    // A scan asked for finds the home full: the folder stops, and says why.
    await call(syncd, 'POST', '/rest/db/scan?folder=h', { timeoutMs: 30_000 });
    const stopped = await pollUntil(
      'the folder in error',
      async () => {
        const status = await folderStatus(syncd, 'h');
        return status.state === 'error' && status;
      },
      60_000,
    );
    t.match(
      stopped.error,
      /^insufficient space on disk for database \(.*index\.sqlite\): current \d+\.\d\d % < required 1 %$/,
      'in Syncthing’s words',
    );
    t.equal((await call(syncd, 'GET', '/rest/system/ping')).status, 200, 'REST answers');
    // It looks again every 10 s, staying in its error state meanwhile.
    type Event = { id: number; type: string; data: { folder?: string } };
    const events = () => api<Event[]>(syncd, 'GET', '/rest/events?since=0&timeout=0');
    const since = (await events()).at(-1)?.id ?? 0;
    await new Promise((resolve) => setTimeout(resolve, 12_000));
    t.same(
      (await events()).filter((event) => event.id > since && event.type === 'StateChanged'),
      [],
      'no state change while it waits for space',
    );
    t.equal((await folderStatus(syncd, 'h')).state, 'error', 'still in error while the disk is full');

    await rm(join(home, 'fill'));
    await pollUntil('b.txt on syncd', () => readFile(join(mine, 'b.txt'), 'utf8'), 90_000);
    await pollUntil('the folder idle again', async () => (await folderStatus(syncd, 'h')).state === 'idle');
    t.equal(await syncd.workerPid(), worker, 'the same worker all along: it never crashed');
    t.equal(syncd.process.exitCode, null, 'and the service runs');
    t.same(await tree(mine), await tree(theirs), 'both sides hold the same files');
  },
);

t.test(
  'a full folder disk fails a pull that is retried with its pause, not woken by its own writes',
  { skip },
  async (t) => {
    const disk = await smallDisk(t, 4);
    const dir = t.testdir({ theirs: { '.stfolder': {}, 'small.txt': 'fits\n' } });
    const theirs = join(dir, 'theirs');
    const big = randomBytes(6 * 1024 * 1024);
    await writeFile(join(theirs, 'big.bin'), big);
    const mine = join(disk, 'mine');
    const { syncd } = await paired(t, {
      id: 'full',
      mine,
      theirs,
      // The space check off, so that the writes themselves meet the full disk; the watcher on, fast.
      // Smallest first: in a random order big.bin's temporary file could fill the disk before
      // small.txt is written, and keep it full (a failed pull keeps it for the next try).
      folder: {
        minDiskFree: { value: 0, unit: '%' },
        pullerPauseS: 3,
        fsWatcherDelayS: 1,
        order: 'smallestFirst',
      },
    });
    await pollUntil('small.txt on syncd', () => readFile(join(mine, 'small.txt'), 'utf8'), 60_000);
    await pollUntil('the pull error', async () => (await folderStatus(syncd, 'full')).pullErrors > 0, 60_000);

    // Its next tries: each starts the pause (3 s, then 3 s again) after the last one failed, plus as long
    // as that pull took; its own writes, seen by the watcher, wake no scan and no pull sooner. Measured by
    // the events' own times, so that a slow machine only makes the wait longer.
    type Event = { id: number; type: string; time: string; data: { item?: string; error?: string | null } };
    const bigEvents = async () =>
      (await api<Event[]>(syncd, 'GET', '/rest/events?since=0&timeout=0')).filter(
        (event) =>
          event.data.item === 'big.bin' && (event.type === 'ItemStarted' || event.type === 'ItemFinished'),
      );
    const seen = await pollUntil(
      'three tries of big.bin',
      async () => {
        const list = await bigEvents();
        return list.filter((event) => event.type === 'ItemStarted').length >= 3 && list;
      },
      120_000,
    );
    const gaps: number[] = [];
    for (let i = 1; i < seen.length; i++) {
      const [before, after] = [seen[i - 1]!, seen[i]!];
      if (before.type === 'ItemFinished' && after.type === 'ItemStarted') {
        t.ok(before.data.error, `try ${gaps.length + 1} failed: ${before.data.error}`);
        gaps.push(Date.parse(after.time) - Date.parse(before.time));
      }
    }
    t.ok(gaps.length >= 2, `${gaps.length} retries seen`);
    t.ok(
      gaps.slice(0, 2).every((gap) => gap >= 2_900),
      `each retry at least the 3 s pause after the failure (${gaps.join(', ')} ms)`,
    );

    await execa('mount', ['-o', 'remount,size=32m', disk]);
    await pollUntil(
      'big.bin on syncd, once there is room',
      async () => (await stat(join(mine, 'big.bin'))).size === big.length,
      60_000,
    );
    await pollUntil('the folder idle', async () => {
      const status = await folderStatus(syncd, 'full');
      return status.state === 'idle' && status.needTotalItems === 0;
    });
    t.same(await tree(mine), await tree(theirs), 'both sides hold the same files');
    t.same(
      (await readdir(mine)).filter((name) => name.startsWith('.syncthing.')),
      [],
      'no temporary file left',
    );
  },
);

t.test(
  'a file changed without its size or time changing reaches Syncthing: the bad request rechecks it',
  { skip },
  async (t) => {
    const dir = t.testdir({ theirs: { '.stfolder': {} }, mine: { '.stfolder': {} } });
    const [theirs, mine] = [join(dir, 'theirs'), join(dir, 'mine')];
    const first = randomBytes(300_000);
    await writeFile(join(mine, 'r.bin'), first);
    await utimes(join(mine, 'r.bin'), 1_700_000_000, 1_700_000_000);
    const { syncd } = await paired(t, { id: 'r', mine, theirs, paused: true });
    await pollUntil('r.bin indexed', async () => {
      const status = await api<{ localFiles: number }>(syncd, 'GET', '/rest/db/status?folder=r');
      return status.localFiles === 1;
    });
    // Other bytes, the same size and time: a scan goes by those, and sees nothing.
    const second = Buffer.from(first);
    second.fill(7, 1000, 2000);
    await writeFile(join(mine, 'r.bin'), second);
    await utimes(join(mine, 'r.bin'), 1_700_000_000, 1_700_000_000);
    await api(syncd, 'POST', '/rest/db/scan?folder=r');
    const devices = await api<Array<{ deviceID: string }>>(syncd, 'GET', '/rest/config/devices');
    for (const device of devices) {
      await api(syncd, 'PATCH', `/rest/config/devices/${device.deviceID}`, { paused: false });
    }
    // Syncthing asks for the blocks it was told of; they are not on disk any more: syncd rechecks.
    await pollUntil(
      'the second content on Syncthing',
      async () =>
        createHash('sha256')
          .update(await readFile(join(theirs, 'r.bin')))
          .digest('hex') === createHash('sha256').update(second).digest('hex'),
      60_000,
    );
    t.same(await tree(theirs), await tree(mine), 'both sides hold the same files');
  },
);
