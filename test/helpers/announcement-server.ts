// A global discovery server reduced to what announcements need: HTTPS with `server`'s certificate,
// each POSTed address list recorded, and Reannounce-After as the test wants it.
import { createServer } from 'node:https';
import type { TestDevice } from './device.ts';
import type { Teardown } from './teardown-first.ts';

/** Starts one on loopback: its URL for options.globalAnnounceServers, and what was announced. */
export async function announcementServer(
  t: Teardown,
  server: TestDevice,
  reannounceAfterS: number,
): Promise<{ url: string; announced: string[][] }> {
  const announced: string[][] = [];
  const https = createServer({ cert: server.cert, key: server.key }, (request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      if (request.method === 'POST') announced.push((JSON.parse(body) as { addresses: string[] }).addresses);
      response.writeHead(204, { 'Reannounce-After': String(reannounceAfterS) }).end();
    });
  });
  await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => https.close(resolve)));
  const port = (https.address() as { port: number }).port;
  return { url: `https://127.0.0.1:${port}/v2/?id=${server.id}`, announced };
}
