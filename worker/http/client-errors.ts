import type { Socket } from 'node:net';
import { errorBody } from './http-errors.ts';

// Node's HTTP parser rejects some requests before any route sees them; they are answered in the same
// JSON shape as every other error, with a message that names the limit.
const answers: Record<string, [number, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [
    408,
    'the request was not sent in full in time (--headers-timeout, --request-timeout)',
  ],
  HPE_HEADER_OVERFLOW: [431, "the request's headers are larger than 16 KiB"],
};

/** Fastify's clientErrorHandler: the answer to a request the parser could not take, then the close. */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] = answers[error.code ?? ''] ?? [400, `malformed request: ${error.message}`];
  const body = JSON.stringify(errorBody(status, message));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${errorBody(status, '').error}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-cache, no-store\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
