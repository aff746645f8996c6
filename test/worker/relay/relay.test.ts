// The relay client in-process: its messages and their bounds, joining a real relay server (strelaysrv
// on loopback) directly and through a pool, a relay that is not the one named, and one that answers
// garbage.
import { createServer as httpServer } from 'node:http';
import { createServer as tlsServer } from 'node:tls';
import getPort from 'get-port';
import t, { type Test } from 'tap';
import {
  encodeRelayMessage,
  MAX_MESSAGE_BYTES,
  type RelayMessage,
  RelayMessageReader,
} from '../../../worker/relay/relay-messages.ts';
import { parseRelayUrl } from '../../../worker/relay/relay-connection.ts';
import { RelayListener } from '../../../worker/relay/relay-listener.ts';
import { recordingLogger } from '../../helpers/app.ts';
import { newTestDevice, type TestDevice } from '../../helpers/device.ts';
import { NO_RELAY_SERVER, startRelayServer } from '../../helpers/relay-server.ts';
import { pollUntil } from '../../helpers/syncthing.ts';

const noRelayServer = NO_RELAY_SERVER ?? false;

t.test('relay messages go out and come back as Syncthing frames them', async (t) => {
  const invitation: RelayMessage = {
    type: 'SessionInvitation',
    invitation: {
      from: Buffer.alloc(32, 1),
      key: Buffer.alloc(32, 2),
      address: Buffer.from([127, 0, 0, 1]),
      port: 22067,
      serverSocket: true,
    },
  };
  const messages: RelayMessage[] = [
    { type: 'Ping' },
    { type: 'JoinRelayRequest' },
    { type: 'Response', code: 2, message: 'already connected' },
    invitation,
  ];
  const bytes = Buffer.concat(messages.map((message) => encodeRelayMessage(message)));
  t.equal(bytes.readUInt32BE(0), 0x9e79bc40, 'the magic');
  t.equal(encodeRelayMessage({ type: 'Ping' }).length, 12, 'an empty message is its header');
  const reader = new RelayMessageReader();
  // Byte by byte: frames are put together across reads.
  const read = [...bytes].flatMap((byte) => reader.push(Buffer.from([byte])));
  t.same(read, messages);
});

t.test('a relay message that breaks the protocol is refused before it is used', async (t) => {
  const header = (type: number, length: number, magic = 0x9e79bc40) => {
    const bytes = Buffer.alloc(12);
    bytes.writeUInt32BE(magic, 0);
    bytes.writeInt32BE(type, 4);
    bytes.writeInt32BE(length, 8);
    return bytes;
  };
  const refused = (bytes: Buffer) => () => new RelayMessageReader().push(bytes);
  t.throws(refused(header(0, 0, 0x9f79bc40)), /not a relay message/);
  t.throws(refused(header(0, MAX_MESSAGE_BYTES + 1)), /1025 bytes \(at most 1024\)/);
  t.throws(refused(header(0, -1)), /at most 1024/);
  t.throws(refused(header(9, 0)), /unknown relay message type 9/);
  const longKey = Buffer.concat([header(3, 40), Buffer.from([0, 0, 0, 36]), Buffer.alloc(36)]);
  t.throws(refused(longKey), /field of 36 bytes \(at most 32\)/);
  t.throws(refused(Buffer.concat([header(3, 4), Buffer.from([0, 0, 0, 8])])), /cut short/);
});

t.test('relay addresses are read as strelaysrv prints them', async (t) => {
  const id = (await newTestDevice()).id;
  t.match(parseRelayUrl(`relay://192.0.2.1:22067/?id=${id}&pingInterval=1m0s`), {
    host: '192.0.2.1',
    port: 22067,
    id,
  });
  t.match(parseRelayUrl('relay://[2001:db8::1]:22067'), { host: '2001:db8::1', id: undefined });
  t.match(parseRelayUrl('relay://192.0.2.1:22067/?id=nope'), /its id is not a device ID/);
  t.match(parseRelayUrl('relay://192.0.2.1'), /names no host and port/);
  t.match(parseRelayUrl('tcp://192.0.2.1:22000'), /not a relay:\/\/ address/);
});

/** strelaysrv on a free loopback port: its address. */
async function relayServer(t: Test): Promise<string> {
  const port = await getPort({ host: '127.0.0.1' });
  return `relay://127.0.0.1:${port}/?id=${await startRelayServer(t, `127.0.0.1:${port}`)}`;
}

function listen(t: Test, text: string, device: TestDevice) {
  const listener = new RelayListener(text, {
    credentials: device,
    logger: recordingLogger().logger,
    invited: () => {},
  });
  t.teardown(() => listener.stop());
  return listener;
}

t.test('a relay is joined, directly or picked from a pool', { skip: noRelayServer }, async (t) => {
  const relay = await relayServer(t);
  const device = await newTestDevice();
  const direct = listen(t, relay, device);
  await pollUntil('joined', async () => direct.status.url !== null);
  t.same(direct.status, { error: null, url: relay });

  // The same device again: the relay answers that it is joined already.
  const again = listen(t, relay, device);
  await pollUntil('refused', async () => again.status.error !== null);
  t.same(again.status, { error: 'incorrect response code 2: already connected', url: null });
  await again.stop();

  const pool = httpServer((_request, response) => {
    response.setHeader('Content-Type', 'application/json');
    response.end(
      JSON.stringify({ relays: [{ url: 'garbage' }, { url: relay.replace('127.0.0.1', '127.0.0.1') }] }),
    );
  });
  await new Promise<void>((resolve) => pool.listen(0, '127.0.0.1', resolve));
  t.teardown(() => pool.close());
  const poolUrl = `dynamic+http://127.0.0.1:${(pool.address() as { port: number }).port}/endpoint`;
  const pooled = listen(t, poolUrl, await newTestDevice());
  await pollUntil('joined through the pool', async () => pooled.status.url !== null);
  t.same(pooled.status, { error: null, url: relay }, 'the relay of the pool');
});

t.test('a relay whose certificate is not the id named is not joined', { skip: noRelayServer }, async (t) => {
  const relay = await relayServer(t);
  const other = (await newTestDevice()).id;
  const listener = listen(t, relay.replace(/id=.*$/, `id=${other}`), await newTestDevice());
  await pollUntil('refused', async () => listener.status.error !== null);
  t.match(listener.status, { error: /relay id does not match/, url: null });
});

t.test('a relay that answers garbage is dropped, with why', async (t) => {
  const relay = await newTestDevice();
  const server = tlsServer({ cert: relay.cert, key: relay.key, ALPNProtocols: ['bep-relay'] }, (socket) => {
    socket.write(Buffer.alloc(64, 0x41));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const port = (server.address() as { port: number }).port;
  const listener = listen(t, `relay://127.0.0.1:${port}/?id=${relay.id}`, await newTestDevice());
  await pollUntil('dropped', async () => listener.status.error !== null);
  t.match(listener.status, { error: /not a relay message/, url: null });
});
