// The commands that show and steer synchronization (folders, devices, need, pending, ignores, watch,
// share, override, revert), against one real syncd and scripted devices in this process: each device
// speaks BEP over TLS to syncd's sync address, offers folders and files, and answers syncd's requests
// only when the test lets it, so that a pull can be seen in progress.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { create } from '@bufbuild/protobuf';
import t, { type Test } from 'tap';
import { runCli } from '../../../scripts/cli/run.ts';
import { ErrorCode, IndexUpdateSchema, ResponseSchema } from '../../../worker/bep/bep_pb.ts';
import { encodeHello } from '../../../worker/bep/frames.ts';
import { newDeviceId } from '../../helpers/config.ts';
import { newTestDevice } from '../../helpers/device.ts';
import { HostilePeer, PeerFolder, shareWithHostile } from '../../helpers/hostile-peer.ts';
import { api, startService, waitFor } from '../../helpers/service.ts';

const service = await startService(t);
const env = {
  SYNCD_ADDRESS: service.address,
  SYNCD_API_KEY: service.apiKey,
  SYNCD_HOME: '/nonexistent-home',
};
const root = t.testdir({ work: {}, offered: {} });

/** Runs `syncd ARGS` in this process; `input` is its standard input. */
async function syncd(args: string[], input = '') {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, {
    env,
    out: (text) => out.push(text),
    err: (text) => err.push(text),
    readInput: async () => input,
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** `syncd ARGS`, which must succeed: its output. */
async function ok(t: Test, args: string[], input?: string): Promise<string> {
  const result = await syncd(args, input);
  t.equal(result.code, 0, `syncd ${args.join(' ')}: ${result.err}`);
  return result.out;
}

const { myID, connectionServiceStatus } = await api<{
  myID: string;
  connectionServiceStatus: Record<string, { lanAddresses: string[] }>;
}>(service, 'GET', '/rest/system/status');
const listen = Object.values(connectionServiceStatus)[0]?.lanAddresses[0] ?? '';

t.test('pending devices and folders: listed, dismissed, accepted', async (t) => {
  const stranger = await newTestDevice();
  // It names itself with an escape sequence that would clear a terminal's screen.
  const hello = encodeHello({
    deviceName: 'evil\u001b[2J',
    clientName: 'hostile-peer',
    clientVersion: 'v1.19.2',
  });
  const knock = async () => {
    const peer = await HostilePeer.connect(listen, stranger, undefined, hello);
    await peer.closedWithin(20_000);
  };
  t.equal(await ok(t, ['pending']), 'nothing pending');
  await knock();
  await waitFor(
    'the device pending',
    async () => (await ok(t, ['pending'])).includes(stranger.id) || undefined,
  );
  t.match(
    await ok(t, ['pending']),
    new RegExp(`^device  ${stranger.id}  evil\\\\u001b\\[2J  from 127\\.0\\.0\\.1:\\d+, last `, 'm'),
    'the escape shown, not sent to the terminal',
  );
  t.notMatch(await ok(t, ['pending']), '\u001b');
  t.match(
    await ok(t, ['devices']),
    `${stranger.id}  evil\\u001b[2J  (pending: last connected from 127.0.0.1:`,
  );
  t.match(await ok(t, ['pending', 'dismiss', stranger.id]), 'dismissed until it connects again');
  t.same(JSON.parse(await ok(t, ['pending', '--json'])), { devices: {}, folders: {} });
  await knock();
  await waitFor('pending again', async () => (await ok(t, ['pending'])).includes(stranger.id) || undefined);
  t.match(
    await ok(t, ['pending', 'accept', stranger.id, '--name', 'laptop']),
    `device ${stranger.id} added (laptop)`,
  );
  const configured = JSON.parse(await ok(t, ['devices', '--json'])) as Array<{ deviceID: string }>;
  t.match(
    configured.find((device) => device.deviceID === stranger.id),
    {
      name: 'laptop',
      addresses: ['dynamic'],
    },
  );

  // Configured now: it connects and offers a folder this device does not share with it.
  const offered = new PeerFolder('photos', stranger);
  const peer = await waitFor('a connection', async () => {
    const attempt = await HostilePeer.connect(listen, stranger, offered);
    if (await attempt.closedWithin(300)) return undefined;
    return attempt;
  });
  t.teardown(() => peer.close());
  const config = offered.clusterConfig(myID);
  config.folders[0]!.label = 'Photos';
  // A second folder whose label is a path out of wherever it is put.
  const escaping = new PeerFolder('evil', stranger).clusterConfig(myID).folders[0]!;
  escaping.label = '../../etc';
  config.folders.push(escaping);
  peer.send({ kind: 'ClusterConfig', body: config });
  await waitFor('the folder pending', async () => (await ok(t, ['pending'])).includes('photos') || undefined);
  t.match(
    await ok(t, ['pending']),
    new RegExp(`^folder  photos  "Photos"  offered by ${stranger.id}, last `, 'm'),
  );
  t.match(
    await ok(t, ['folders']),
    'photos  (pending: offered by laptop as "Photos"; syncd pending accept photos PATH shares it)',
  );
  const noPath = await syncd(['pending', 'accept', 'photos']);
  t.match(
    [noPath.code, noPath.err],
    [2, /needs the PATH where the folder goes \(defaults\.folder\.path is not set/],
  );
  const nothing = await syncd(['pending', 'accept', 'nope']);
  t.match([nothing.code, nothing.err], [1, /nothing pending has the ID "nope"/]);
  // Under defaults.folder.path: the label made one name, a directory there already passed over.
  const base = join(root, 'offered');
  await mkdir(join(base, 'Photos'));
  await api(service, 'PATCH', '/rest/config/defaults/folder', { path: base });
  t.match(
    await ok(t, ['pending', 'accept', 'photos']),
    `folder photos added at ${join(base, 'photos')}, shared with ${stranger.id}`,
    'Photos exists: the ID names it',
  );
  t.match(await ok(t, ['pending', 'accept', 'evil']), `folder evil added at ${join(base, '.. .. etc')}`);
  await api(service, 'PATCH', '/rest/config/defaults/folder', { path: '' });
  const folders = await api<Array<{ id: string; label: string; devices: Array<{ deviceID: string }> }>>(
    service,
    'GET',
    '/rest/config/folders',
  );
  const photos = folders.find((f) => f.id === 'photos');
  t.equal(photos?.label, 'Photos');
  t.same(photos?.devices.map((d) => d.deviceID).sort(), [myID, stranger.id].sort());
  await waitFor('the offer gone', async () => !(await ok(t, ['pending'])).includes('photos') || undefined);
  await ok(t, ['folders', 'remove', 'photos']);
  await ok(t, ['folders', 'remove', 'evil']);
  await ok(t, ['devices', 'remove', stranger.id]);
});

t.test('a pull seen in progress: folders, need, devices and watch', async (t) => {
  const path = join(root, 'work');
  const hostile = await shareWithHostile(service, 'work', path);
  t.teardown(() => Promise.all(hostile.opened.map((peer) => peer.close())));
  const peer = await hostile.connect();
  // syncd's requests wait for the test's answer.
  peer.answering = false;
  const a = randomBytes(300_000);
  const b = randomBytes(5000);
  const files = [
    hostile.folder.file('a.bin', a),
    hostile.folder.file('dir/b.txt', b),
    hostile.folder.directory('dir'),
  ];
  // watch goes on from the last ItemFinished so far: none of this pull's can come before it starts.
  const [last] = await api<Array<{ id: number }>>(
    service,
    'GET',
    '/rest/events?events=ItemFinished&limit=1&timeout=0',
  );
  const since = String(last?.id ?? 0);
  const watched = syncd([
    'watch',
    '--events',
    'ItemFinished',
    '--since',
    since,
    '--count',
    '3',
    '--timeout',
    '60s',
  ]);
  peer.send({ kind: 'IndexUpdate', body: create(IndexUpdateSchema, { folder: 'work', files }) });
  await peer.until('a request', () => peer.requests.length > 0);

  const listed = await ok(t, ['folders']);
  t.match(listed, new RegExp(`^work  ${path}  sendreceive  shared with 1 device  sync`, 'm'));
  t.match(
    listed,
    /^ {2}needs [23] items, 29[0-9]\.\d KiB: 0% of 29\d\.\d KiB in sync, \d+(\.\d)? (B|KiB|MiB)\/s in \(syncd need work lists them\)$/m,
  );
  const need = await ok(t, ['need', 'work']);
  t.match(need, /^folder work needs, 0% in sync: [23] items, 29\d\.\d KiB$/m);
  t.match(
    need,
    /^ {2}a\.bin {2}\(file, 293\.0 KiB, modified \d{4}-\d\d-\d\d \d\d:\d\d:\d\d, being pulled\)$/m,
  );
  t.match(need, /^ {2}dir\/b\.txt {2}\(file, 4\.9 KiB, modified /m);
  const needJson = JSON.parse(await ok(t, ['need', 'work', '--json'])) as {
    need: { progress: Array<{ name: string }> };
  };
  t.same(needJson.need.progress.map((file) => file.name).sort(), ['a.bin', 'dir/b.txt'], 'being pulled');
  const devices = await ok(t, ['devices']);
  t.match(
    devices,
    new RegExp(
      `^${hostile.device.id}  hostile  dynamic  \\(connected at 127\\.0\\.0\\.1:\\d+, hostile-peer v1\\.19\\.2\\)$`,
      'm',
    ),
  );
  t.match(
    devices,
    /^ {2}in \d+(\.\d)? (B|KiB) \(\d+(\.\d)? (B|KiB)\/s\), out \d+(\.\d)? (B|KiB) \(\d+(\.\d)? (B|KiB)\/s\); it has \d+% of the folders shared with it$/m,
  );

  // The device answers: the files arrive, and watch has seen both.
  peer.answering = true;
  for (const request of peer.requests) {
    const data = hostile.folder.data
      .get(request.name)
      ?.subarray(Number(request.offset), Number(request.offset) + request.size);
    peer.send({
      kind: 'Response',
      body: create(
        ResponseSchema,
        data ? { id: request.id, data } : { id: request.id, code: ErrorCode.NO_SUCH_FILE },
      ),
    });
  }
  const watch = await watched;
  t.equal(watch.code, 0, watch.err);
  const lines = watch.out.split('\n');
  t.match(lines, Array(3).fill(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}ItemFinished +folder work: update /));
  t.same(lines.map((line) => line.replace(/^.*folder work: /, '')).sort(), [
    'update dir dir done',
    'update file a.bin done',
    'update file dir/b.txt done',
  ]);
  await waitFor(
    'the pull done',
    async () => (await ok(t, ['need', 'work'])).startsWith('folder work needs nothing') || undefined,
  );
  t.same(await readFile(join(path, 'a.bin')), a);
  t.notMatch(await ok(t, ['folders']), /needs/);

  // Shared with one more device, then not.
  const other = newDeviceId();
  const unknown = await syncd(['folders', 'share', 'work', other]);
  t.match([unknown.code, unknown.err], [1, /is not configured: syncd devices add ID first/]);
  await ok(t, ['devices', 'add', other, '--name', 'spare']);
  t.match(
    await ok(t, ['folders', 'share', 'work', other]),
    `folder work shared with ${other}; now with 2 devices`,
  );
  t.match(await ok(t, ['folders', 'unshare', 'work', other]), 'now with 1 device');
  const stranger = await syncd(['folders', 'unshare', 'work', other]);
  t.match([stranger.code, stranger.err], [1, `folder work is not shared with ${other}`]);
  await ok(t, ['devices', 'remove', other]);

  // Ignores: set from arguments and from standard input, read back, cleared.
  t.match(
    await ok(t, ['ignores', 'set', 'work', '*.tmp', '/build']),
    'folder work ignores, from now on:\n*.tmp\n/build',
  );
  t.equal(await ok(t, ['ignores', 'get', 'work']), '*.tmp\n/build');
  await ok(t, ['ignores', 'set', 'work', '-'], '// from stdin\n*.log\n');
  t.equal(await ok(t, ['ignores', 'get', 'work']), '// from stdin\n*.log');
  t.equal(await readFile(join(path, '.stignore'), 'utf8'), '// from stdin\n*.log\n');
  t.match(await ok(t, ['ignores', 'clear', 'work']), 'folder work ignores nothing now');
  t.equal(await ok(t, ['ignores', 'get', 'work']), '');

  // A send-only folder that another device changed: out of sync until overridden.
  const wrongType = await syncd(['folders', 'override', 'work']);
  t.match(
    [wrongType.code, wrongType.err],
    [1, /folder work is sendreceive: override is for sendonly folders/],
  );
  t.match(
    await ok(t, ['folders', 'edit', 'work', '--type', 'sendonly']),
    'folder work changed: type "sendonly"',
  );
  await waitFor(
    'send-only',
    async () =>
      (await api<{ type: string }>(service, 'GET', '/rest/config/folders/work')).type === 'sendonly' ||
      undefined,
  );
  peer.send({
    kind: 'IndexUpdate',
    body: create(IndexUpdateSchema, {
      folder: 'work',
      files: [hostile.folder.file('a.bin', randomBytes(1000))],
    }),
  });
  await waitFor('out of sync', async () => (await ok(t, ['folders'])).includes('out of sync') || undefined);
  t.match(
    await ok(t, ['folders']),
    /^ {2}out of sync: 1 item changed elsewhere \(syncd folders override work makes this folder's versions win\)$/m,
  );
  t.match(await ok(t, ['need', 'work']), /^folder work differs from the global versions .*: 1 item/m);
  t.match(await ok(t, ['folders', 'override', 'work']), 'folder work overridden');
  await waitFor('in sync', async () => !(await ok(t, ['folders'])).includes('out of sync') || undefined);
  t.same(await readFile(join(path, 'a.bin')), a, 'its own version kept');

  // A receive-only folder with a file added here: a local change until reverted.
  await ok(t, ['folders', 'edit', 'work', '--type', 'receiveonly']);
  await waitFor(
    'receive-only',
    async () =>
      (await api<{ type: string }>(service, 'GET', '/rest/config/folders/work')).type === 'receiveonly' ||
      undefined,
  );
  await writeFile(join(path, 'local.txt'), 'made here\n');
  await ok(t, ['scan', 'work']);
  t.match(
    await ok(t, ['folders']),
    /^ {2}local changes: 1 item, 10 B \(syncd folders revert work undoes them\)$/m,
  );
  t.match(
    await ok(t, ['need', 'work']),
    /^local changes \(syncd folders revert work undoes them\): 1 item\n {2}local\.txt {2}\(file, 10 B, /m,
  );
  t.match(await ok(t, ['folders', 'revert', 'work']), 'folder work reverted');
  await waitFor('reverted', async () => !(await ok(t, ['folders'])).includes('local changes') || undefined);
  await t.rejects(stat(join(path, 'local.txt')), 'the file only this device had is gone');
  await rm(join(path, '.stignore'), { force: true });
});

t.test('usage mistakes of the new commands: exit 2 and what was wrong', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [['need'], /need needs the FOLDER/],
    [['pending', 'frob'], /pending takes nothing, accept or dismiss/],
    [['pending', 'accept'], /needs the ID of a pending device or folder/],
    [['ignores', 'get'], /ignores get needs the FOLDER/],
    [['ignores', 'set', 'work'], /ignores set needs the PATTERNs/],
    [['ignores', 'show', 'work'], /ignores takes get, set or clear/],
    [['ignores'], /ignores needs get, set or clear/],
    [['folders', 'share', 'work', 'garbage'], /"garbage" is not a device ID: a device ID has 56 characters/],
    [['watch', 'now'], /watch takes no arguments/],
    [['watch', '--count', '0'], /--count: "0" is not a whole number of events above 0/],
    [['watch', '--disk', '--events', 'StateChanged'], /--disk and --events go apart/],
    [['ping', '--count', '1'], /--count goes with watch/],
    [['folders', 'edit', 'work'], /folders edit needs --label or --type/],
    [['folders', 'share', 'work'], /folders share needs the folder ID and DEVICE IDs/],
    [['folders', 'add', 'x', '/x', '--name', 'y'], /--name goes with devices add, pending accept/],
  ];
  for (const [args, message] of cases) {
    const result = await syncd(args);
    t.equal(result.code, 2, args.join(' '));
    t.match(result.err, message, args.join(' '));
  }
});
