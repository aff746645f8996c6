// A bare node:http server answering a ping with the same bytes syncd sends: the throughput ceiling.
import { createServer } from 'node:http';

const body = '{"ping":"pong"}';
const port = Number(process.argv[2] ?? 0);
const server = createServer((_request, response) => {
  response.writeHead(200, {
    'cache-control': 'no-cache, no-store',
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  response.end(body);
});
server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : ''}\n`);
});
