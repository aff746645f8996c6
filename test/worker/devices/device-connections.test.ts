// The devices' connections in-process, two syncd sides and raw TLS peers on loopback: what a peer that
// breaks the protocol gets (its connection closed, a warning naming why, the others untouched), and the
// refusals (unknown, paused, no certificate, TLS 1.2).
import { createServer, type Server } from 'node:net';
import { connect, type TLSSocket } from 'node:tls';
import { create } from '@bufbuild/protobuf';
import t, { type Test } from 'tap';
import { ClusterConfigSchema, IndexSchema, PingSchema, ResponseSchema } from '../../../worker/bep/bep_pb.ts';
import { encodeHello, encodeMessage, type Frame, FrameReader } from '../../../worker/bep/frames.ts';
import { BEP_ALPN } from '../../../worker/bep/tls-options.ts';
import { DeviceConnections } from '../../../worker/devices/device-connections.ts';
import { memoryDeviceStore } from '../../../worker/devices/device-store.ts';
import { EventLog } from '../../../worker/events/event-log.ts';
import { recordingLogger } from '../../helpers/app.ts';
import { localConfig, testConfiguration } from '../../helpers/config.ts';
import { newTestDevice, type TestDevice } from '../../helpers/device.ts';
import { pollUntil } from '../../helpers/syncthing.ts';
import { join } from 'node:path';

const quick = { pingEveryMs: 60_000, receiveTimeoutMs: 120_000, helloTimeoutMs: 2000 };

/** A syncd side: its device, configuration, connections and the listener that feeds them. */
async function side(
  t: Test,
  device: TestDevice,
  devices: Array<Record<string, unknown>>,
  folders: Array<Record<string, unknown>> = [],
  rest: Record<string, unknown> = {},
) {
  const local = localConfig(testConfiguration({ ...rest, devices, folders }, device.id), device.id);
  const events = new EventLog();
  const subscription = events.subscription(EventLog.defaultTypes);
  const { logger, warnings } = recordingLogger();
  const connections = new DeviceConnections({
    myId: device.id,
    credentials: device,
    config: local.config,
    events,
    logger,
    store: memoryDeviceStore(),
    index: () => ({ indexId: 0n, maxSequence: 0n }),
    times: quick,
  });
  const server: Server = createServer((socket) => connections.accept(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  t.teardown(async () => {
    await connections.close();
    await new Promise((resolve) => server.close(resolve));
  });
  return { connections, local, events, subscription, warnings, address: `tcp://127.0.0.1:${port}`, port };
}

/** A raw peer: TLS with `device`'s certificate, frames read as they come. */
async function rawPeer(t: Test, port: number, device: TestDevice, options: { maxVersion?: 'TLSv1.2' } = {}) {
  const socket: TLSSocket = connect({
    host: '127.0.0.1',
    port,
    cert: device.cert,
    key: device.key,
    rejectUnauthorized: false,
    ALPNProtocols: [BEP_ALPN],
    ...options,
  });
  t.teardown(() => socket.destroy());
  const reader = new FrameReader();
  const frames: Frame[] = [];
  socket.on('data', (chunk: Buffer) => {
    reader.push(chunk);
    for (let frame = reader.next(); frame; frame = reader.next()) frames.push(frame);
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('error', reject);
  });
  return { socket, frames, closed };
}

const hello = encodeHello({ deviceName: 'raw', clientName: 'raw-peer', clientVersion: 'v0.0.1' });
const clusterConfig = encodeMessage({ kind: 'ClusterConfig', body: create(ClusterConfigSchema) });

t.test('two syncd sides connect, and a pause closes the connection at once', async (t) => {
  const [a, b] = [await newTestDevice(), await newTestDevice()];
  const sideB = await side(t, b, [{ deviceID: a.id, addresses: ['dynamic'] }]);
  const sideA = await side(t, a, [{ deviceID: b.id, addresses: [sideB.address] }]);
  sideA.connections.start();
  await pollUntil('A connected to B', async () => sideA.connections.connections.get(b.id));
  const onB = await pollUntil('B connected to A', async () => sideB.connections.connections.get(a.id));
  t.match(onB, { type: 'tcp-server', clientName: 'syncd', crypto: /^TLS1\.3-/ });
  // The Hellos and ClusterConfigs: what one side sent, the other received (inside TLS, dialed or
  // accepted), kept once the connection has ended.
  const during = await pollUntil('bytes counted alike on both sides', async () => {
    const ab = sideA.connections.traffic().get(b.id);
    const ba = sideB.connections.traffic().get(a.id);
    return ab && ba && ab.outBytes > 0 && ab.outBytes === ba.inBytes && ab.inBytes === ba.outBytes && ab;
  });
  await sideB.local.config.change((draft) => {
    for (const device of draft.devices) if (device.deviceID === a.id) device.paused = true;
  });
  await pollUntil('A disconnected', async () => !sideA.connections.connections.has(b.id));
  const after = sideA.connections.traffic().get(b.id)!;
  t.ok(after.inBytes >= during.inBytes && after.outBytes >= during.outBytes, 'the ended connection’s bytes');
  t.notOk(sideB.connections.connections.has(a.id), 'B closed it');
  const types = (await sideA.subscription.since(0, 0)).map((event) => event.type);
  t.match(types, ['DeviceConnected', 'ClusterConfigReceived', 'DeviceDisconnected']);
  // A dials again, and is refused while paused: no connection, however often it tries.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.notOk(sideB.connections.connections.has(a.id), 'refused while paused');
  await sideB.local.config.change((draft) => {
    for (const device of draft.devices) if (device.deviceID === a.id) device.paused = false;
  });
  await pollUntil('connected again on resume', async () => sideB.connections.connections.get(a.id));
  await pollUntil('the new connection’s bytes added to them', async () => {
    const traffic = sideA.connections.traffic().get(b.id)!;
    return traffic.inBytes > after.inBytes && traffic.outBytes > after.outBytes;
  });
});

t.test('a device connecting from outside its allowedNetworks is refused, and not dialed there', async (t) => {
  const [a, b] = [await newTestDevice(), await newTestDevice()];
  const sideB = await side(t, b, [
    { deviceID: a.id, addresses: ['dynamic'], allowedNetworks: ['10.0.0.0/8'] },
  ]);
  const sideA = await side(t, a, [
    { deviceID: b.id, addresses: [sideB.address], allowedNetworks: ['!127.0.0.0/8', '0.0.0.0/0'] },
  ]);
  sideA.connections.start();
  await pollUntil('A tried', async () => Object.keys(sideA.connections.lastDialStatus).length > 0);
  t.match(sideA.connections.lastDialStatus, { [sideB.address]: { error: 'network disallowed' } });
  // A allowed to dial B's loopback address, but B allows A from 10/8 only.
  await sideA.local.config.change((draft) => {
    for (const device of draft.devices) if (device.deviceID === b.id) device.allowedNetworks = [];
  });
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.notOk(sideB.connections.connections.has(a.id), 'refused by B');
  await sideB.local.config.change((draft) => {
    for (const device of draft.devices)
      if (device.deviceID === a.id) device.allowedNetworks = ['127.0.0.0/8'];
  });
  await pollUntil('connected once allowed', async () => sideB.connections.connections.get(a.id));
});

t.test(
  'a device takes the name its Hello gives when it has none, or with overwriteRemoteDeviceNamesOnConnect',
  async (t) => {
    const [a, b, c] = [await newTestDevice(), await newTestDevice(), await newTestDevice()];
    const others = [{ deviceID: a.id }, { deviceID: b.id, name: 'B', addresses: ['dynamic'] }];
    const sideB = await side(t, b, others);
    const sideC = await side(t, c, [{ deviceID: a.id }, { deviceID: c.id, name: 'C' }]);
    const sideA = await side(t, a, [
      { deviceID: b.id, addresses: [sideB.address] },
      { deviceID: c.id, name: 'my name for C', addresses: [sideC.address] },
    ]);
    sideA.connections.start();
    const nameOf = (id: string) => sideA.local.config.current.devices.find((d) => d.deviceID === id)?.name;
    await pollUntil('B named', async () => nameOf(b.id) === 'B');
    await pollUntil('C connected', async () => sideA.connections.connections.get(c.id));
    t.equal(nameOf(c.id), 'my name for C', 'a name given is kept');
    await sideA.local.config.change((draft) => {
      draft.options.overwriteRemoteDeviceNamesOnConnect = true;
    });
    sideA.connections.connections.get(c.id)?.session.close('again');
    await pollUntil('C renamed on its next connection', async () => nameOf(c.id) === 'C');
    t.pass('renamed');
  },
);

t.test(
  'folders offered by an auto-accepting introducer are accepted, its devices introduced, and removed',
  async (t) => {
    const [a, b] = [await newTestDevice(), await newTestDevice()];
    const elsewhere = await newTestDevice();
    const offered = (devices: string[]) => ({
      id: 'offered-id',
      label: 'Offered/../x',
      path: t.testdir(),
      devices: devices.map((deviceID) => ({ deviceID })),
    });
    const sideB = await side(
      t,
      b,
      [{ deviceID: a.id }, { deviceID: elsewhere.id, name: 'E', addresses: ['tcp://127.0.0.1:1'] }],
      [offered([a.id, elsewhere.id])],
    );
    const base = t.testdir();
    const sideA = await side(
      t,
      a,
      [{ deviceID: b.id, addresses: [sideB.address], autoAcceptFolders: true, introducer: true }],
      [],
      { defaults: { folder: { path: base } } },
    );
    sideA.connections.start();
    const folder = () => sideA.local.config.current.folders.find((f) => f.id === 'offered-id');
    const introduced = () => sideA.local.config.current.devices.find((d) => d.deviceID === elsewhere.id);
    await pollUntil('accepted and introduced', async () => folder() && introduced());
    t.match(folder(), { label: 'Offered/../x', path: join(base, 'Offered .. x') });
    t.match(introduced(), { name: 'E', addresses: ['dynamic', 'tcp://127.0.0.1:1'], introducedBy: b.id });
    const shares = folder()?.devices.map((d) => `${d.deviceID} by ${d.introducedBy || 'the user'}`);
    t.same(
      shares?.sort(),
      [`${a.id} by the user`, `${b.id} by the user`, `${elsewhere.id} by ${b.id}`].sort(),
      'shared with B, and with the device B introduced',
    );
    await pollUntil('the folder shared back: B has a ClusterConfig offering it', async () => {
      const received = (await sideB.subscription.since(0, 0)).filter(
        (e) => e.type === 'ClusterConfigReceived',
      );
      return received.length >= 2;
    });
    t.same(sideA.connections.pendingFolders.list(), {}, 'nothing pending');
    // B stops sharing the folder with the other device: A follows.
    await sideB.local.config.change((draft) => {
      for (const f of draft.folders) f.devices = f.devices.filter((d) => d.deviceID !== elsewhere.id);
    });
    await pollUntil('the introduced device removed', async () => !introduced());
    t.same(
      folder()
        ?.devices.map((d) => d.deviceID)
        .sort(),
      [a.id, b.id].sort(),
      'and its share',
    );
  },
);

t.test(
  'whatever a peer sends that breaks the protocol closes its connection only, with the reason',
  async (t) => {
    const [me, good, bad] = [await newTestDevice(), await newTestDevice(), await newTestDevice()];
    const goodSide = await side(t, good, [{ deviceID: me.id, addresses: ['dynamic'] }]);
    const mine = await side(
      t,
      me,
      [
        { deviceID: good.id, addresses: [goodSide.address] },
        { deviceID: bad.id, addresses: ['dynamic'] },
      ],
      [{ id: 'shared', path: t.testdir(), devices: [{ deviceID: bad.id }] }],
    );
    mine.connections.start();
    await pollUntil('the good device connected', async () => mine.connections.connections.get(good.id));

    const cases: Array<[string, Buffer[], RegExp]> = [
      ['not BEP at all', [Buffer.from('GET / HTTP/1.1\r\n\r\n')], /unknown magic 0x47455420/],
      [
        'a message length over the limit',
        [hello, clusterConfig, Buffer.from('0000ffffffff', 'hex')],
        /over the limit/,
      ],
      [
        'an LZ4 size its data cannot hold',
        [hello, clusterConfig, Buffer.from('00021001000000067fffffff0000', 'hex')],
        /claim 2147483647 decompressed/,
      ],
      [
        'a message before the ClusterConfig',
        [hello, encodeMessage({ kind: 'Ping', body: create(PingSchema) })],
        /first message was Ping/,
      ],
      [
        'an index for a folder not shared',
        [
          hello,
          clusterConfig,
          encodeMessage({ kind: 'Index', body: create(IndexSchema, { folder: 'secret' }) }),
        ],
        /folder "secret", which is not shared/,
      ],
      [
        'a Response to no Request',
        [hello, clusterConfig, encodeMessage({ kind: 'Response', body: create(ResponseSchema, { id: 7 }) })],
        /a Response to no Request/,
      ],
      [
        'a malformed body',
        [hello, clusterConfig, Buffer.from('00020807000000020a7f', 'hex')],
        /malformed message of type 7/,
      ],
      [
        'a ClusterConfig that leaves this device out of a shared folder',
        [
          hello,
          encodeMessage({
            kind: 'ClusterConfig',
            body: create(ClusterConfigSchema, {
              folders: [{ id: 'shared', devices: [{ id: Buffer.alloc(32, 1) }] }],
            }),
          }),
        ],
        /this device is missing from folder "shared"/,
      ],
    ];
    for (const [what, chunks, reason] of cases) {
      const peer = await rawPeer(t, mine.port, bad);
      for (const chunk of chunks) peer.socket.write(chunk);
      await Promise.race([
        peer.closed,
        new Promise((_, reject) => setTimeout(() => reject(new Error(`${what}: not closed`)), 10_000)),
      ]);
      t.pass(`${what}: closed`);
      if (what !== 'not BEP at all') {
        await pollUntil(`${what}: logged`, async () => mine.warnings.some((warning) => reason.test(warning)));
        t.pass(`${what}: the reason is a warning`);
      }
    }
    t.ok(mine.connections.connections.has(good.id), 'the good connection went on throughout');
  },
);

t.test(
  'refused: an unknown device (pending), no certificate, TLS 1.2, a device that says no Hello',
  async (t) => {
    const [me, stranger] = [await newTestDevice(), await newTestDevice()];
    const mine = await side(t, me, []);
    for (let i = 0; i < 2; i++) {
      const peer = await rawPeer(t, mine.port, stranger);
      peer.socket.write(hello);
      await peer.closed;
      t.equal(peer.frames[0]?.kind, 'hello', 'the Hello is exchanged first');
      if (peer.frames[0]?.kind === 'hello')
        t.equal(peer.frames[0].hello.deviceName, '', 'no name told to a stranger');
      t.equal(peer.frames.length, 1, 'and nothing more: no ClusterConfig, no Close');
    }
    t.match(mine.connections.pendingDevices(), [
      { device: stranger.id, name: 'raw', address: /^127\.0\.0\.1:\d+$/ },
    ]);
    const pendingEvents = (await mine.subscription.since(0, 0)).filter(
      (event) => event.type === 'PendingDevicesChanged',
    );
    t.equal(pendingEvents.length, 1, 'PendingDevicesChanged once, not for each try');
    t.equal(
      (await mine.subscription.since(0, 0)).filter((event) => event.type === 'DeviceRejected').length,
      2,
      'DeviceRejected each time',
    );
    await mine.local.config.change((draft) => {
      draft.remoteIgnoredDevices.push({ deviceID: stranger.id, name: 'raw', address: '', time: '' });
    });
    t.same(mine.connections.pendingDevices(), [], 'ignored: no longer pending, as Syncthing cleans it');
    await mine.local.config.change((draft) => {
      draft.remoteIgnoredDevices = [];
    });
    await rawPeer(t, mine.port, stranger).then(async (peer) => {
      peer.socket.write(hello);
      await peer.closed;
    });
    t.ok(mine.connections.dismissPending(stranger.id), 'pending again once no longer ignored, dismissed');
    t.same(mine.connections.pendingDevices(), []);

    const anonymous = connect({ host: '127.0.0.1', port: mine.port, rejectUnauthorized: false });
    anonymous.on('error', () => {});
    await new Promise((resolve) => anonymous.once('close', resolve));
    t.pass('a client without a certificate is closed');

    await t.rejects(
      rawPeer(t, mine.port, stranger, { maxVersion: 'TLSv1.2' }),
      /protocol version|alert/i,
      'TLS 1.2 refused',
    );

    const silent = await rawPeer(t, mine.port, stranger);
    await Promise.race([
      silent.closed,
      new Promise((_, reject) => setTimeout(() => reject(new Error('still open')), 10_000)),
    ]);
    t.pass('a peer that says no Hello is closed after the Hello timeout');
    t.equal(mine.connections.connections.size, 0);
  },
);

t.test('connectionLimitMax refuses connections past it; connectionLimitEnough stops dialing', async (t) => {
  const [a, b, c] = [await newTestDevice(), await newTestDevice(), await newTestDevice()];
  const sideB = await side(t, b, [
    { deviceID: a.id, addresses: ['dynamic'] },
    { deviceID: c.id, addresses: ['dynamic'] },
  ]);
  await sideB.local.config.change((draft) => {
    draft.options.connectionLimitMax = 1;
  });
  const sideA = await side(t, a, [{ deviceID: b.id, addresses: [sideB.address] }]);
  sideA.connections.start();
  await pollUntil('A connected to B', async () => sideB.connections.connections.get(a.id));
  const sideC = await side(t, c, [{ deviceID: b.id, addresses: [sideB.address] }]);
  sideC.connections.start();
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.notOk(sideB.connections.connections.has(c.id), 'C is one past the limit: refused');
  await sideC.connections.close();

  // B, at its limit of one connection to dial, dials C no more.
  await sideB.local.config.change((draft) => {
    draft.options.connectionLimitMax = 0;
    draft.options.connectionLimitEnough = 1;
    for (const device of draft.devices) if (device.deviceID === c.id) device.addresses = [sideC.address];
  });
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.notOk(Object.keys(sideB.connections.lastDialStatus).includes(sideC.address), 'C not dialed');
});
