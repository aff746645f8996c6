import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createServer, type TLSSocket } from 'node:tls';
import t from 'tap';
import { serverOptions } from '../../../worker/bep/tls-options.ts';
import { dial } from '../../../worker/devices/dialer.ts';
import { testDevice } from '../../helpers/device.ts';

t.test(
  'a dialed connection hands over every byte in order, those sent before anyone listened too',
  async (t) => {
    const credentials = await testDevice();
    // More than the connection's read buffer, in pieces of several sizes, sent the moment TLS is up.
    const pieces = [1, 100, 16 * 1024, 70 * 1024, 5, 300 * 1024].map((size) => randomBytes(size));
    const sent = Buffer.concat(pieces);
    const accepted: TLSSocket[] = [];
    const server = createServer(serverOptions(credentials, 5000), (socket) => {
      accepted.push(socket);
      for (const piece of pieces) socket.write(piece);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const dialed = await dial(`tcp://127.0.0.1:${port}`, credentials, 5000);
    t.teardown(() => {
      dialed.socket.destroy();
      for (const socket of accepted) socket.destroy();
      server.close();
    });
    // Nobody listens for a while: what arrives meanwhile must wait, not be lost.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const chunks: Buffer[] = [];
    dialed.onData((chunk) => chunks.push(chunk));
    const deadline = Date.now() + 10_000;
    while (Buffer.concat(chunks).length < sent.length && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const received = Buffer.concat(chunks);
    t.equal(received.length, sent.length, 'every byte');
    // Joined only now, after every read: a chunk that were a view of the read buffer (read into
    // again) would have changed since.
    t.ok(received.equals(sent), 'in order, and as sent');
  },
);

t.test('a refused connection and a failed handshake are told apart', async (t) => {
  const credentials = await testDevice();
  // A port nothing listens on: the one a server just gave up.
  const closed = createServer(serverOptions(credentials, 5000));
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port: gone } = closed.address() as AddressInfo;
  await new Promise((resolve) => closed.close(resolve));
  await t.rejects(
    dial(`tcp://127.0.0.1:${gone}`, credentials, 5000),
    /^dial tcp:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/,
  );

  // A server that speaks no TLS: it answers with garbage and closes.
  const { createServer: createTcpServer } = await import('node:net');
  const plain = createTcpServer((socket) => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  t.teardown(() => plain.close());
  const { port } = plain.address() as AddressInfo;
  await t.rejects(
    dial(`tcp://127.0.0.1:${port}`, credentials, 5000),
    /^TLS handshake with tcp:\/\/127\.0\.0\.1:\d+: /,
  );
});
