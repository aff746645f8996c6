// One real syncd and a hostile device it is configured to share a folder with: symlinks that lead out of
// the folder, names syncd keeps for itself, messages built to cost memory or time, a version counter at
// its maximum, a file larger than any disk. Beside the folder lies a canary directory that nothing may
// create, change, delete or read in; after every case it is compared byte for byte (times included),
// the worker must be the same process, and the REST interface must answer.
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import {
  lstat,
  open,
  readdir,
  readFile,
  readlink,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { create, toBinary } from '@bufbuild/protobuf';
import t, { type Test } from 'tap';
import { shortIdOf } from '../../../shared/device-id.ts';
import {
  ClusterConfigSchema,
  ErrorCode,
  type FileInfo,
  FileInfoType,
  IndexUpdateSchema,
  RequestSchema,
} from '../../../worker/bep/bep_pb.ts';
import { newTestDevice } from '../../helpers/device.ts';
import {
  deletedFilesIndex,
  emptyFilesIndex,
  HostilePeer,
  MessageType,
  rawFrame,
  shareWithHostile,
  sha256,
  watchWorker,
} from '../../helpers/hostile-peer.ts';
import { api, call, startService, waitFor } from '../../helpers/service.ts';

const FOLDER = 'shared';
const MiB = 2 ** 20;
// The canary's files: old times, access before modification, so that Linux's relatime records any read.
const CANARY_MTIME = 1_577_836_800; // 2020-01-01
const CANARY_ATIME = CANARY_MTIME - 86_400;
const LEGAL_BATCHES = 3;
// A ping slower than this is a worker that stopped serving (a blocked event loop took 11 to 20 s before
// the bounds); below it, a busy machine's: the worker runs at a low priority (npm run bench measures).
const SLOW_PING_MS = 8000;
const EVENTS = 'RemoteIndexUpdated,StateChanged,ClusterConfigReceived';

const root = t.testdir({
  folder: {
    '.stignore': '// written by the test: syncd must keep these bytes\n',
    cdir: { 'secret.txt': 'a decoy, indexed where the symlink will be\n' },
  },
  canary: {
    'secret.txt': 'canary: these bytes must never leave this directory\n',
    victim: 'canary: the victim, never to be overwritten nor deleted\n',
    notes: { 'inner.txt': 'canary: deeper down\n' },
  },
});
const folderPath = join(root, 'folder');
const canary = join(root, 'canary');
const canarySecret = await readQuietly(join(canary, 'secret.txt'));
const canaryVictim = await readQuietly(join(canary, 'victim'));
for (const name of ['secret.txt', 'victim', 'notes/inner.txt', 'notes', '.'])
  await utimes(join(canary, name), CANARY_ATIME, CANARY_MTIME);
// A large file whose blocks case i asks for.
const large = randomBytes(32 * MiB);
await writeFile(join(folderPath, 'large.bin'), large);

const syncd = await startService(t);
const setup = await shareWithHostile(syncd, FOLDER, folderPath);
const { device: hostile, folder, syncdId: myID, listen, opened } = setup;
const connectPeer = setup.connect;
t.teardown(() => Promise.all(opened.map((peer) => peer.close())));
// Subscriptions start with their first request: these see every event from here on.
await api(syncd, 'GET', '/rest/events?since=0&timeout=0');
await api(syncd, 'GET', `/rest/events?since=0&timeout=0&events=${EVENTS}`);
const canaryBefore = await snapshot(canary);

type Event = { id: number; type: string; data: Record<string, unknown> };
const eventsSince = (since: number, timeoutS = 0) =>
  api<Event[]>(syncd, 'GET', `/rest/events?since=${since}&timeout=${timeoutS}&events=${EVENTS}`);
const lastEventId = async () =>
  (await api<Event[]>(syncd, 'GET', `/rest/events?limit=1&timeout=0&events=${EVENTS}`)).at(-1)?.id ?? 0;

/** A file's bytes, read without changing its access time (which tells a read by syncd). */
async function readQuietly(path: string): Promise<Buffer> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOATIME);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** Every entry below `dir`: mode, times, bytes or target (read without touching their access times). */
async function snapshot(dir: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const walk = async (relative: string) => {
    const path = join(dir, relative);
    const info = await lstat(path, { bigint: true });
    const entry: Record<string, unknown> = { mode: info.mode, mtimeNs: info.mtimeNs, ctimeNs: info.ctimeNs };
    if (info.isDirectory()) {
      out[relative] = entry;
      for (const name of (await readdir(path)).sort()) await walk(join(relative, name));
      return;
    }
    if (info.isSymbolicLink()) entry.target = await readlink(path);
    else {
      entry.bytes = (await readQuietly(path)).toString('base64');
      entry.atimeNs = info.atimeNs;
    }
    out[relative] = entry;
  };
  await walk('.');
  return out;
}

/**
 * Sends files as an IndexUpdate and waits until syncd has pulled with them: a pull that started after
 * they were recorded has ended (or the connection was closed over them).
 */
async function announce(peer: HostilePeer, files: FileInfo[]): Promise<void> {
  const mark = await lastEventId();
  peer.send({ kind: 'IndexUpdate', body: create(IndexUpdateSchema, { folder: FOLDER, files }) });
  await waitFor(
    `a pull with ${files.map((file) => file.name).join(', ')}`,
    async () => {
      if (peer.closed) return true;
      const events = await eventsSince(mark, 1);
      const ofFolder = (event: Event) => event.type === 'StateChanged' && event.data.folder === FOLDER;
      const recorded = events.find((e) => e.type === 'RemoteIndexUpdated' && e.data.device === hostile.id);
      const started = events.find(
        (e) => recorded && e.id > recorded.id && ofFolder(e) && e.data.to === 'syncing',
      );
      const ended = events.find(
        (e) => started && e.id > started.id && ofFolder(e) && e.data.from === 'syncing',
      );
      return ended ? true : undefined;
    },
    30_000,
  );
}

const isSymlink = (name: string) =>
  lstat(join(folderPath, name)).then(
    (info) => info.isSymbolicLink(),
    () => false,
  );
const exists = (path: string) =>
  lstat(path).then(
    () => true,
    () => false,
  );

/**
 * One case: then the canary is as it was before it (each case answers for what it did; the last test
 * compares with the start), the worker the same process, and a ping answered; every connection it
 * opened is closed.
 */
function hostileCase(name: string, run: (t: Test) => Promise<void>): void {
  t.test(name, async (t) => {
    const worker = await syncd.workerPid();
    const before = await snapshot(canary);
    try {
      await run(t);
    } finally {
      await Promise.all(opened.splice(0).map((peer) => peer.close()));
      t.same(
        await snapshot(canary),
        before,
        'the canary is as it was: nothing made, changed, deleted or read',
      );
      t.equal(await syncd.workerPid().catch(() => 0), worker, 'the same worker');
      const ping = await call(syncd, 'GET', '/rest/system/ping').catch((error: Error) => error.message);
      t.match(ping, { status: 200, body: { ping: 'pong' } }, 'a ping is answered');
    }
  });
}

hostileCase('a. a symlink leading out of the folder, and a file below it', async (t) => {
  const peer = await connectPeer();
  const variants: Array<[string, FileInfo[]]> = [
    ['link', [folder.symlink('link', canary)]],
    ['rel', [folder.symlink('rel', '../canary')]],
  ];
  for (const [link, first] of variants) {
    await announce(peer, first);
    const linked = await isSymlink(link);
    const name = `${link}/escape.txt`;
    await announce(peer, [folder.file(name, Buffer.from('written through a symlink\n'))]);
    t.notOk(await exists(join(canary, 'escape.txt')), `${link}: nothing written through it`);
    if (linked)
      t.notOk(
        peer.requests.some((r) => r.name === name),
        `${link}: no block of ${name} asked for`,
      );
    else t.comment(`${link} was not made a symlink: nothing to ask of ${name}`);
  }
  // A directory pulled as one, then announced as a symlink with a file below it, in one message.
  await announce(peer, [folder.directory('d')]);
  t.ok((await lstat(join(folderPath, 'd'))).isDirectory(), 'd pulled as a directory');
  await announce(peer, [
    folder.symlink('d', canary),
    folder.file('d/escape.txt', Buffer.from('through d\n')),
  ]);
  t.notOk(await exists(join(canary, 'escape.txt')), 'd: nothing written through it');
});

hostileCase('b. a directory pulled, then a symlink on disk: no update or deletion through it', async (t) => {
  const peer = await connectPeer();
  // The version syncd pulls has the canary's size and time: through the symlink, the canary looks
  // unchanged since that pull, the way a victim known to the attacker would.
  const first = Buffer.alloc(canaryVictim.length, 'v');
  await announce(peer, [
    folder.directory('linkb'),
    folder.file('linkb/victim', first, { modifiedS: BigInt(CANARY_MTIME) }),
  ]);
  t.same(await readFile(join(folderPath, 'linkb/victim')), first, 'linkb/victim pulled');
  await rm(join(folderPath, 'linkb'), { recursive: true });
  await symlink(canary, join(folderPath, 'linkb'));
  await announce(peer, [folder.file('linkb/victim', Buffer.from('overwritten through linkb\n'))]);
  t.same(await readQuietly(join(canary, 'victim')), canaryVictim, 'not overwritten');
  await announce(peer, [folder.deleted('linkb/victim')]);
  t.ok(await exists(join(canary, 'victim')), 'not deleted');
});

hostileCase('c. a Request through a symlink on disk gets no byte from outside the folder', async (t) => {
  // cdir/secret.txt was indexed as a file; now cdir leads to the canary.
  await rm(join(folderPath, 'cdir'), { recursive: true });
  await symlink(canary, join(folderPath, 'cdir'));
  const peer = await connectPeer();
  const ask = (id: number, hash: Uint8Array) =>
    peer.send({
      kind: 'Request',
      body: create(RequestSchema, {
        id,
        folder: FOLDER,
        name: 'cdir/secret.txt',
        offset: 0n,
        size: canarySecret.length,
        hash,
      }),
    });
  // With the canary's own hash (an attacker who knows the file), and with none.
  ask(9001, sha256(canarySecret));
  ask(9002, new Uint8Array());
  const answers = await peer.until('both answers', () => peer.responses.length >= 2 && peer.responses);
  for (const answer of answers) {
    t.notOk(Buffer.from(answer.data).includes(canarySecret.subarray(0, 16)), `${answer.id}: no canary bytes`);
    t.equal(answer.code, ErrorCode.NO_SUCH_FILE, `${answer.id}: NO_SUCH_FILE, as Syncthing answers`);
  }
});

hostileCase('d. names syncd keeps for itself are never pulled', async (t) => {
  const stignore = await readFile(join(folderPath, '.stignore'));
  const peer = await connectPeer();
  const internal = ['.stignore', '.stfolder/x', '.stversions/x', 'sub/.syncthing.x.tmp'];
  const files = internal.map((name) => folder.file(name, Buffer.from(`// ${name}, from a hostile peer\n`)));
  await announce(peer, [...files, folder.file('d-sentinel.txt', Buffer.from('an ordinary file\n'))]);
  t.ok(await exists(join(folderPath, 'd-sentinel.txt')), 'the ordinary file beside them is pulled');
  const written = await readFile(join(folderPath, '.stignore'));
  t.same(written, stignore, '.stignore keeps its bytes');
  for (const name of internal.slice(1)) t.notOk(await exists(join(folderPath, name)), `${name} not written`);
  t.notOk(
    peer.requests.some((r) => internal.includes(r.name)),
    'no block of them asked for',
  );
  // The next cases scan with the folder's own .stignore, whatever happened here.
  if (!written.equals(stignore)) await writeFile(join(folderPath, '.stignore'), stignore);
});

// 8 million empty FileInfos: 16 MB once decompressed, about 63 KB on the wire.
const emptyFiles = rawFrame(MessageType.INDEX, emptyFilesIndex(FOLDER, 8_000_000), true);

hostileCase(
  'e. ten unknown devices at once, each sending 63 KB that would decompress to 16 MB',
  async (t) => {
    const stranger = await newTestDevice();
    const watch = watchWorker(syncd, await syncd.workerPid());
    const peers = await Promise.all(Array.from({ length: 10 }, () => HostilePeer.connect(listen, stranger)));
    opened.push(...peers);
    for (const peer of peers) peer.sendRaw(emptyFiles);
    const ends = await Promise.all(peers.map((peer) => peer.closedWithin(20_000)));
    const figures = await watch.stop();
    t.equal(ends.filter(Boolean).length, 10, 'each refused');
    t.ok(
      figures.peakMb - figures.beforeMb < 100,
      `worker RSS grew ${(figures.peakMb - figures.beforeMb).toFixed(1)} MB`,
    );
    t.ok(
      figures.worstPingMs < SLOW_PING_MS && figures.failedPings === 0,
      `worst ping ${figures.worstPingMs.toFixed(0)} ms`,
    );
    await api(syncd, 'DELETE', `/rest/cluster/pending/devices?device=${stranger.id}`);
  },
);

hostileCase('f. an Index of 8 million empty files in one message, and one of 10,001', async (t) => {
  const refused = async (frame: Buffer) => {
    const logged = syncd.logs.length;
    const peer = await connectPeer();
    peer.sendRaw(frame);
    t.ok(await peer.closedWithin(20_000), 'closed');
    const line = await waitFor(
      'the warning saying why',
      async () =>
        syncd.logs
          .slice(logged)
          .find((line) => line.level === 40 && String(line.reason).startsWith('protocol error')),
      10_000,
    ).catch(() => undefined);
    return String(line?.reason);
  };
  // 63 KB of LZ4: refused by the size it claims, before anything is decompressed.
  t.match(await refused(emptyFiles), /Index over a limit: \d+ bytes of LZ4 claim \d+ decompressed/);
  const justOver = rawFrame(MessageType.INDEX, emptyFilesIndex(FOLDER, 10_001));
  t.match(await refused(justOver), /Index over a limit: more than 10000 files/);
});

hostileCase('g. ClusterConfigs offering folders with huge labels', async (t) => {
  const offer = (label: string) =>
    toBinary(
      ClusterConfigSchema,
      create(ClusterConfigSchema, {
        folders: [{ id: 'g-offered', label, devices: folder.clusterConfig(myID).folders[0]?.devices }],
      }),
    );
  const huge = await connectPeer(false);
  huge.sendRaw(rawFrame(MessageType.CLUSTER_CONFIG, offer('L'.repeat(20_000_000)), true));
  t.ok(await huge.closedWithin(20_000), 'a label of 20 MB (LZ4: 80 KB): closed');
  const long = await connectPeer(false);
  long.sendRaw(rawFrame(MessageType.CLUSTER_CONFIG, offer('L'.repeat(2000))));
  t.ok(await long.closedWithin(20_000), 'a label of 2,000 bytes, over the bound of 1,024: closed');
  const events = await call(syncd, 'GET', '/rest/events?since=0&timeout=0');
  const pending = await call(syncd, 'GET', '/rest/cluster/pending/folders');
  t.ok(JSON.stringify(events.body).length < 1_000_000, 'the event log holds no such label');
  t.notOk(JSON.stringify(pending.body).includes('L'.repeat(1025)), 'nor do the pending folders');
});

hostileCase('i. 1,200 Requests for 1 MiB blocks whose answers are never read', async (t) => {
  const peer = await connectPeer();
  peer.stopReading();
  const watch = watchWorker(syncd, await syncd.workerPid());
  for (let id = 1; id <= 1200; id++) {
    const offset = ((id * 7) % 32) * MiB;
    peer.send({
      kind: 'Request',
      body: create(RequestSchema, {
        id,
        folder: FOLDER,
        name: 'large.bin',
        offset: BigInt(offset),
        size: MiB,
        hash: sha256(large.subarray(offset, offset + MiB)),
      }),
    });
  }
  // Nothing to poll for: syncd reads until its answers back up, then holds them. Memory is watched
  // for a while after.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const figures = await watch.stop();
  const grown = figures.peakMb - figures.beforeMb;
  t.ok(grown < 100, `worker RSS grew ${grown.toFixed(1)} MB`);
  t.ok(
    figures.worstPingMs < SLOW_PING_MS && figures.failedPings === 0,
    `worst ping ${figures.worstPingMs.toFixed(0)} ms`,
  );
});

hostileCase("j. syncd's version counter at 2^64 - 1: a local edit still goes out", async (t) => {
  const peer = await connectPeer();
  const counters = [
    { id: shortIdOf(myID), value: 2n ** 64n - 1n },
    { id: shortIdOf(hostile.id), value: 1n },
  ].sort((a, b) => (a.id < b.id ? -1 : 1));
  await announce(peer, [folder.file('j.txt', Buffer.from('from the peer\n'), { version: { counters } })]);
  t.same(await readFile(join(folderPath, 'j.txt'), 'utf8'), 'from the peer\n', 'pulled');
  const edited = 'edited here, after the pull\n';
  await writeFile(join(folderPath, 'j.txt'), edited);
  await api(syncd, 'POST', `/rest/db/scan?folder=${FOLDER}&sub=j.txt`);
  const sent = await peer
    .until(
      'the edit in an IndexUpdate',
      () =>
        peer.messages
          .flatMap((m) => (m.kind === 'IndexUpdate' || m.kind === 'Index' ? m.body.files : []))
          .find((file) => file.name === 'j.txt' && Number(file.size) === edited.length),
      15_000,
    )
    .catch(() => undefined);
  t.ok(sent, 'the edit is sent');
  const own = sent?.version?.counters.find((counter) => counter.id === shortIdOf(myID));
  t.comment(`syncd's counter in it: ${own?.value}`);
});

hostileCase('k. a file of 1 TiB beside a small one', async (t) => {
  const peer = await connectPeer();
  const blockSize = 16 * MiB;
  const blocks = Array.from({ length: 65_536 }, (_, at) => ({
    offset: BigInt(at) * BigInt(blockSize),
    size: blockSize,
    hash: sha256(Buffer.from(String(at))),
  }));
  const huge = folder.record({
    name: 'huge.bin',
    type: FileInfoType.FILE,
    size: 2n ** 40n,
    blockSize,
    blocks,
  });
  await announce(peer, [huge, folder.file('k-small.txt', Buffer.from('small\n'))]);
  t.ok(await exists(join(folderPath, 'k-small.txt')), 'the small file is pulled');
  t.notOk(
    peer.requests.some((r) => r.name === 'huge.bin'),
    'no block of the 1 TiB file asked for',
  );
  const temporary = await stat(join(folderPath, '.syncthing.huge.bin.tmp')).catch(() => undefined);
  t.ok(!temporary || temporary.size < 2 ** 30, 'no temporary file of its size');
  const errors = await api<{ errors: Array<{ path: string; error: string }> | null }>(
    syncd,
    'GET',
    `/rest/folder/errors?folder=${FOLDER}`,
  );
  t.match(
    errors.errors?.find((e) => e.path === 'huge.bin')?.error,
    /insufficient space/,
    'a folder error says why',
  );
});

// Last: the index holds 100,000 more records afterwards, which every later pull would go through.
hostileCase(
  `h. index updates: a million files in one, ${LEGAL_BATCHES} × 10,000 in a row, 10,000 folders offered`,
  async (t) => {
    const million = await connectPeer();
    million.sendRaw(rawFrame(MessageType.INDEX_UPDATE, deletedFilesIndex(FOLDER, 'm/', 1_000_000)));
    t.ok(await million.closedWithin(20_000), 'a million files in one IndexUpdate: closed');

    const peer = await connectPeer();
    const mark = await lastEventId();
    const watch = watchWorker(syncd, await syncd.workerPid());
    const version = { id: shortIdOf(hostile.id), value: 1n };
    // Each message of 10,000 files costs the worker about a second (recording them, and the pull's
    // need of them): 10 here, 40 in `npm run bench -- --hostile`.
    for (let batch = 0; batch < LEGAL_BATCHES; batch++)
      peer.sendRaw(
        rawFrame(MessageType.INDEX_UPDATE, deletedFilesIndex(FOLDER, `h${batch}/`, 10_000, version), true),
      );
    await waitFor(
      `the ${LEGAL_BATCHES} IndexUpdates recorded`,
      async () => {
        if (peer.closed) return true;
        const recorded = (await eventsSince(mark, 1)).filter((event) => event.type === 'RemoteIndexUpdated');
        return recorded.length >= LEGAL_BATCHES || undefined;
      },
      60_000,
    );
    const figures = await watch.stop();
    t.notOk(
      peer.closed,
      `${LEGAL_BATCHES} × 10,000 files: the connection stays (${peer.end?.reason ?? 'open'})`,
    );
    t.ok(
      figures.worstPingMs < SLOW_PING_MS && figures.failedPings === 0,
      `worst ping ${figures.worstPingMs.toFixed(0)} ms`,
    );
    await peer.close();

    // 10,000 folders offered that are not shared: taken, but only so many kept as pending.
    const offers = await connectPeer(false);
    const devices = folder.clusterConfig(myID).folders[0]?.devices;
    const offered = Array.from({ length: 10_000 }, (_, at) => ({ id: `p${at}`, label: `p${at}`, devices }));
    const before = await lastEventId();
    offers.send({ kind: 'ClusterConfig', body: create(ClusterConfigSchema, { folders: offered }) });
    await waitFor(
      'the ClusterConfig taken',
      async () =>
        offers.closed ||
        (await eventsSince(before, 1)).some((e) => e.type === 'ClusterConfigReceived') ||
        undefined,
      30_000,
    );
    t.notOk(offers.closed, 'processed, the connection open');
    const pending = await api<Record<string, unknown>>(
      syncd,
      'GET',
      `/rest/cluster/pending/folders?device=${hostile.id}`,
    );
    t.ok(
      Object.keys(pending).length <= 1000,
      `${Object.keys(pending).length} pending folders kept (at most 1,000)`,
    );
  },
);

t.test('the canary at the end is as it was at the start', async (t) => {
  t.same(await snapshot(canary), canaryBefore);
});
