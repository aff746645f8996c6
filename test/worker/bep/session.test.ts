import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { connect, createServer, type TLSSocket } from 'node:tls';
import { create } from '@bufbuild/protobuf';
import t, { type Test } from 'tap';
import { ClusterConfigSchema, PingSchema, ResponseSchema } from '../../../worker/bep/bep_pb.ts';
import type { BepMessage } from '../../../worker/bep/messages.ts';
import { encodeHello, encodeMessage } from '../../../worker/bep/frames.ts';
import { BepSession, MAX_ANSWERING_BYTES, MAX_WAITING_REQUESTS } from '../../../worker/bep/session.ts';
import { TokenBucket } from '../../../worker/devices/bandwidth.ts';
import { clientOptions, serverOptions } from '../../../worker/bep/tls-options.ts';
import { testDevice } from '../../helpers/device.ts';

const hello = { deviceName: 'test', clientName: 'syncd', clientVersion: 'v0.0.0' };

/**
 * Two sessions over TLS on loopback: `session` dials, and what the other side receives goes into
 * `received`; `peer` is the other side's socket.
 */
async function connected(t: Test) {
  const credentials = await testDevice();
  const received: BepMessage[] = [];
  let serverSocket: TLSSocket | undefined;
  const server = createServer(serverOptions(credentials, 5000), (socket) => {
    serverSocket = socket;
    const session = new BepSession(socket);
    void session.exchangeHello(hello).then(() => session.start((m) => void received.push(m), 'never'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const socket = connect({
    ...clientOptions(credentials),
    port: (server.address() as AddressInfo).port,
    host: '127.0.0.1',
  });
  t.teardown(() => {
    socket.destroy();
    serverSocket?.destroy();
    server.close();
  });
  await new Promise<void>((resolve) => socket.once('secureConnect', resolve));
  const session = new BepSession(socket);
  await session.exchangeHello(hello);
  const here: BepMessage[] = [];
  session.start((message) => void here.push(message), 'never');
  while (!serverSocket) await new Promise((resolve) => setTimeout(resolve, 10));
  return { session, socket, peer: serverSocket, received, here };
}

t.test('messages sent in one turn, small and large mixed, arrive whole, large Responses last', async (t) => {
  const { session, received } = await connected(t);

  // Sizes on both sides of the size written alone, in one turn of the event loop.
  const sizes = [10, 200 * 1024, 100, 3000, 16 * 1024, 16 * 1024 - 1, 128 * 1024, 0, 50];
  const sent = sizes.map((size) => randomBytes(size));
  session.send({ kind: 'ClusterConfig', body: create(ClusterConfigSchema) });
  sent.forEach((data, id) => {
    session.send({ kind: 'Response', body: create(ResponseSchema, { id, data }) });
    if (id % 3 === 0) session.send({ kind: 'Ping', body: create(PingSchema) });
  });
  const expected = 1 + sent.length + Math.ceil(sent.length / 3);
  const deadline = Date.now() + 10_000;
  while (received.length < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));

  t.equal(received.length, expected, 'every message arrived');
  const responses = received.filter((m) => m.kind === 'Response');
  for (const m of responses) {
    const { id } = m.body;
    t.ok(Buffer.from(m.body.data).equals(sent[id] as Buffer), `response ${id} (${sizes[id]} bytes) whole`);
  }
  // The first large one goes at once; the socket is then backed up, and the others wait behind the rest.
  const large = (m: BepMessage) => m.kind === 'Response' && m.body.data.length > 10_000;
  t.same(
    responses.filter(large).map((m) => m.body.id),
    [1, 4, 5, 6],
    'large Responses in the order sent',
  );
  t.same(
    received.filter((m) => !large(m)).map((m) => (m.kind === 'Response' ? m.body.id : m.kind)),
    ['ClusterConfig', 0, 'Ping', 2, 3, 'Ping', 'Ping', 7, 8],
    'everything else in the order sent',
  );
  t.same(
    received.map((m) => (m.kind === 'Response' ? m.body.id : m.kind)).slice(-3),
    [4, 5, 6],
    'the large Responses that waited come last',
  );
});

t.test(
  'while the peer does not read, frames wait, large Responses behind the rest, and arrive whole once it does',
  async (t) => {
    const { session, socket, peer, received } = await connected(t);
    // The peer stops reading: the kernel's buffers fill, and the socket backs up.
    peer.pause();
    session.send({ kind: 'ClusterConfig', body: create(ClusterConfigSchema) });
    const sent = Array.from({ length: 40 }, (_, id) => randomBytes(id % 4 === 3 ? 100 : 256 * 1024));
    for (const [id, data] of sent.entries()) {
      session.send({ kind: 'Response', body: create(ResponseSchema, { id, data }) });
      session.send({ kind: 'Ping', body: create(PingSchema) });
      // Some in later turns of the event loop, while the first still wait.
      if (id % 10 === 9) await new Promise((resolve) => setImmediate(resolve));
    }
    t.ok(socket.writableLength < 4 * 256 * 1024, 'the socket holds only a few of them');
    await new Promise((resolve) => setTimeout(resolve, 100));
    peer.resume();
    const expected = 1 + 2 * sent.length;
    const deadline = Date.now() + 10_000;
    while (received.length < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    t.equal(received.length, expected, 'every message arrived');
    const responses = received.filter((m) => m.kind === 'Response');
    t.ok(
      responses.every((m) => Buffer.from(m.body.data).equals(sent[m.body.id] as Buffer)),
      'each whole',
    );
    const large = (m: BepMessage) => m.kind === 'Response' && m.body.data.length > 100;
    t.same(
      responses.filter(large).map((m) => m.body.id),
      sent.flatMap((data, id) => (data.length > 100 ? [id] : [])),
      'large Responses in the order sent',
    );
    t.same(
      received.filter((m) => !large(m)).map((m) => (m.kind === 'Response' ? m.body.id : m.kind)),
      ['ClusterConfig', ...sent.flatMap((data, id) => (data.length > 100 ? ['Ping'] : [id, 'Ping']))],
      'everything else in the order sent',
    );
    // In the last turn (30 to 39), the socket was backed up after its first frame at the latest: its
    // small Responses went before the large ones sent before them.
    const at = (id: number) => received.findIndex((m) => m.kind === 'Response' && m.body.id === id);
    for (const [small, before] of [
      [35, [32, 33, 34]],
      [39, [32, 33, 34, 36, 37, 38]],
    ] as const) {
      t.ok(
        before.every((id) => at(small) < at(id)),
        `small Response ${small} before the large ones sent before it (${before.join(', ')})`,
      );
    }
  },
);

/** A session accepting a raw TLS client, not started: the test writes frames by hand and starts it. */
async function unstarted(t: Test) {
  const credentials = await testDevice();
  let accepted: ((session: BepSession) => void) | undefined;
  const made = new Promise<BepSession>((resolve) => (accepted = resolve));
  const server = createServer(serverOptions(credentials, 5000), (socket) => {
    const session = new BepSession(socket);
    session.exchangeHello(hello).catch(() => {});
    accepted?.(session);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = connect({
    ...clientOptions(credentials),
    port: (server.address() as AddressInfo).port,
    host: '127.0.0.1',
  });
  client.on('error', () => {});
  t.teardown(() => {
    client.destroy();
    server.close();
  });
  await new Promise<void>((resolve) => client.once('secureConnect', resolve));
  const session = await made;
  t.teardown(() => session.socket.destroy());
  return { session, client };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

t.test('nothing after the Hello is read until the session starts', async (t) => {
  const { session, client } = await unstarted(t);
  // Not BEP at all after the Hello: read, it would close the session.
  client.write(Buffer.concat([encodeHello(hello), Buffer.from('0000ffffffff', 'hex')]));
  await settle();
  t.equal(session.ended, undefined, 'not read before the start');
  session.start(() => {}, 'never');
  t.match(session.ended, { reason: /protocol error: message length 4294967295 is over the limit/ });
});

t.test('a handler’s promise holds the next message until it settles', async (t) => {
  const { session, client } = await unstarted(t);
  const seen: string[] = [];
  let release: (() => void) | undefined;
  session.start((message) => {
    seen.push(message.kind);
    if (message.kind === 'ClusterConfig') return new Promise<void>((resolve) => (release = resolve));
  }, 'never');
  const ping = encodeMessage({ kind: 'Ping', body: create(PingSchema) });
  client.write(
    Buffer.concat([
      encodeHello(hello),
      encodeMessage({ kind: 'ClusterConfig', body: create(ClusterConfigSchema) }),
      ping,
      ping,
    ]),
  );
  while (!release) await new Promise((resolve) => setTimeout(resolve, 10));
  await settle();
  t.same(seen, ['ClusterConfig'], 'the Pings wait');
  release();
  while (seen.length < 3) await new Promise((resolve) => setTimeout(resolve, 10));
  t.same(seen, ['ClusterConfig', 'Ping', 'Ping']);
});

t.test('answers past their bound wait their turn, and past so many waiting the reading stops', async (t) => {
  const { session, client } = await unstarted(t);
  session.start(() => {}, 'never');
  client.write(
    Buffer.concat([
      encodeHello(hello),
      encodeMessage({ kind: 'ClusterConfig', body: create(ClusterConfigSchema) }),
    ]),
  );
  const answers: Array<() => void> = [];
  let produced = 0;
  const block = 1024 * 1024;
  const asked = MAX_ANSWERING_BYTES / block + MAX_WAITING_REQUESTS + 1;
  for (let id = 0; id < asked; id++) {
    session.answer(block, () => {
      produced += 1;
      return new Promise((resolve) =>
        answers.push(() => resolve(create(ResponseSchema, { id, data: randomBytes(16) }))),
      );
    });
  }
  t.equal(produced, MAX_ANSWERING_BYTES / block, 'only the bound’s worth is read; the rest wait');
  t.ok(session.socket.isPaused(), 'not read while more than so many requests wait');
  while (produced < asked) {
    for (const answer of answers.splice(0)) answer();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  for (const answer of answers.splice(0)) answer();
  while (session.answering > 0) await new Promise((resolve) => setTimeout(resolve, 10));
  t.notOk(session.socket.isPaused(), 'read again once they are answered');
});

t.test('a request is settled by the Response with its ID, or rejected when the session ends', async (t) => {
  const { session, received, peer } = await connected(t);
  session.send({ kind: 'ClusterConfig', body: create(ClusterConfigSchema) });
  const block = { folder: 'f', name: 'a', offset: 0n, size: 3, hash: new Uint8Array(32), blockNo: 0 };
  const asked = [
    session.request({ ...block, fromTemporary: false }),
    session.request({ ...block, fromTemporary: true }),
  ];
  const deadline = Date.now() + 10_000;
  while (received.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const ids = received.filter((m) => m.kind === 'Request').map((m) => m.body.id);
  t.equal(new Set(ids).size, 2, 'two Requests with IDs of their own');
  // The other side answers the second with data, the first with an error, in that order (after the
  // ClusterConfig a session must get first).
  peer.write(encodeMessage({ kind: 'ClusterConfig', body: create(ClusterConfigSchema) }, 'never'));
  peer.write(
    encodeMessage(
      { kind: 'Response', body: create(ResponseSchema, { id: ids[1], data: Buffer.from('abc') }) },
      'never',
    ),
  );
  peer.write(
    encodeMessage({ kind: 'Response', body: create(ResponseSchema, { id: ids[0], code: 2 }) }, 'never'),
  );
  t.same(Buffer.from(await (asked[1] as Promise<Uint8Array>)), Buffer.from('abc'), 'its data');
  await t.rejects(asked[0] as Promise<Uint8Array>, {
    name: 'RequestError',
    code: 2,
    message: 'the device answered NO_SUCH_FILE',
  });

  const pending = session.request({ ...block, fromTemporary: false });
  peer.destroy();
  await t.rejects(pending, { name: 'RequestError', message: /^the connection to the device ended: / });
  await t.rejects(session.request({ ...block, fromTemporary: false }), { name: 'RequestError' }, 'and after');
});

t.test('under a send limit and a receive limit, the bytes keep to the rate, in order', async (t) => {
  const { session, received, peer, here } = await connected(t);
  // 2 MiB/s from here: 1.5 MiB past the 512 KiB burst takes about 0.75 s.
  let rate = 2 * 1024 * 1024;
  const bucket = new TokenBucket(() => rate);
  session.limit({ send: (bytes) => bucket.take(bytes), receive: () => 0 });
  const started = performance.now();
  const sizes = [128 * 1024, 10, 512 * 1024, 1024 * 1024, 20, 384 * 1024];
  session.send({ kind: 'ClusterConfig', body: create(ClusterConfigSchema) });
  sizes.forEach((size, id) =>
    session.send({ kind: 'Response', body: create(ResponseSchema, { id, data: randomBytes(size) }) }),
  );
  const deadline = Date.now() + 20_000;
  while (received.length < sizes.length + 1 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
  const took = performance.now() - started;
  t.same(
    received.map((message) => (message.kind === 'Response' ? message.body.id : -1)),
    [-1, 0, 1, 2, 3, 4, 5],
    'every frame, in the order sent',
  );
  t.ok(took >= 600, `1.5 MiB past the burst at 2 MiB/s took ${Math.round(took)} ms (at least 0.6 s)`);

  // Receiving: what the peer sends is read at the limit.
  rate = 0;
  const reader = new TokenBucket(() => 1024 * 1024);
  session.limit({ send: () => 0, receive: (bytes) => reader.take(bytes) });
  const begun = performance.now();
  peer.write(encodeMessage({ kind: 'ClusterConfig', body: create(ClusterConfigSchema) }));
  for (let id = 0; id < 12; id++) {
    peer.write(
      encodeMessage({
        kind: 'Response',
        body: create(ResponseSchema, { id, data: randomBytes(128 * 1024) }),
      }),
    );
  }
  while (here.length < 13 && Date.now() < deadline + 20_000) await new Promise((r) => setTimeout(r, 10));
  const read = performance.now() - begun;
  t.equal(here.length, 13, 'every message read');
  t.ok(read >= 700, `1.5 MiB read at 1 MiB/s past the burst took ${Math.round(read)} ms (at least 0.7 s)`);
});
