import type { AddressInfo } from 'node:net';
import { connect, type ConnectionOptions, createServer, type TlsOptions } from 'node:tls';
import t, { type Test } from 'tap';
import { clientOptions, hasAesInstructions, serverOptions } from '../../../worker/bep/tls-options.ts';
import { testDevice } from '../../helpers/device.ts';

// The cipher a connection settles on, between a server and a client with these options.
async function negotiated(t: Test, server: TlsOptions, client: ConnectionOptions): Promise<string> {
  const listening = createServer(server, (socket) => socket.end());
  t.teardown(() => listening.close());
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  const socket = connect({ ...client, port: (listening.address() as AddressInfo).port, host: '127.0.0.1' });
  t.teardown(() => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('error', reject);
  });
  return socket.getCipher().name;
}

t.test(
  'with AES in hardware, connections take AES-128-GCM, as Syncthing does, whoever dials',
  { skip: hasAesInstructions() ? false : 'this CPU has no AES instructions' },
  async (t) => {
    const credentials = await testDevice();
    // OpenSSL's own order, as a peer with Node's defaults offers it: AES-256 first.
    const plain = { minVersion: 'TLSv1.3', ...credentials, rejectUnauthorized: false } as const;
    t.equal(
      await negotiated(t, serverOptions(credentials, 5000), plain),
      'TLS_AES_128_GCM_SHA256',
      'a device that dials syncd',
    );
    // A server that takes the client's order (Go's takes its own: AES-128 first, with AES in hardware).
    t.equal(
      await negotiated(t, { ...plain, honorCipherOrder: false }, clientOptions(credentials)),
      'TLS_AES_128_GCM_SHA256',
      'a device syncd dials',
    );
    t.equal(await negotiated(t, plain, plain), 'TLS_AES_256_GCM_SHA384', "OpenSSL's order otherwise");
  },
);
