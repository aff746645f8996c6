import type { Socket } from 'node:net';
import { type ErrorCode, errorBody } from './http-errors.ts';
import { MAX_HEADER_BYTES } from './limits.ts';

// Node's HTTP parser rejects some requests before any route sees them; they are answered in the same
// JSON shape as every other error, with a message that names the limit.
const answers: Record<string, [ErrorCode, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [
    'SYNCD_ERR_REQUEST_TIMEOUT',
    'the request was not sent in full in time (--headers-timeout, --request-timeout)',
  ],
  HPE_HEADER_OVERFLOW: [
    'SYNCD_ERR_HEADERS_TOO_LARGE',
    `the request's headers are larger than ${MAX_HEADER_BYTES / 1024} KiB`,
  ],
};

// How long a connection that was answered with an error may go on sending before it is cut.
const LINGER_MS = 2000;

/** Fastify's clientErrorHandler: the answer to a request the parser could not take, then the close. */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody left to answer; one already answered is closing.
  if (error.code === 'ECONNRESET' || socket.destroyed || socket.writableEnded) return;
  const [code, message] = answers[error.code ?? ''] ?? [
    'SYNCD_ERR_MALFORMED_REQUEST',
    `malformed request: ${error.message}`,
  ];
  const answer = errorBody(code, message);
  const body = JSON.stringify(answer);
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(
    `HTTP/1.1 ${answer.statusCode} ${answer.error}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-cache, no-store\r\nConnection: close\r\n\r\n${body}`,
  );
  lingerThenClose(socket);
}

/**
 * A lingering close, as nginx's `lingering_close`: closing a socket with unread input sends a reset,
 * and a client still sending (a slow request's next header byte) would then lose the answer waiting
 * in its receive buffer. The input is read and dropped, no longer parsed, until the client closes its
 * side or `LINGER_MS` passes.
 */
function lingerThenClose(socket: Socket): void {
  socket.removeAllListeners('data');
  socket.on('data', () => {});
  socket.resume();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('end', () => socket.destroy());
  socket.once('close', () => clearTimeout(timer));
}
