import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { HttpError } from './http-errors.ts';
import { busy } from './closing.ts';
import { MAX_HEADER_BYTES } from './limits.ts';
import { JSON_TYPE, PING_BODY } from './routes/system.ts';

export interface ServerOptions {
  /** Bounds on slow clients; Node's defaults when not given. */
  limits?: { headersTimeoutMs: number; requestTimeoutMs: number };
  /** Serve HTTPS on the connections handed over, with this certificate and key. */
  tls?: { cert: string; key: string } | null;
  /** Answers a request before Fastify sees it, or says false. */
  fastPing: (raw: IncomingMessage, res: ServerResponse) => boolean;
}

/**
 * The HTTP server Fastify serves on, so that slow clients are bounded: time for the headers and the
 * whole request, checked every second (Node's default check runs every 30 s), time for a TLS
 * handshake, and the size of headers. With TLS, the same server speaks HTTPS on the connection handed
 * over.
 */
export function httpServerFactory(options: ServerOptions) {
  return (handler: (raw: IncomingMessage, res: ServerResponse) => void): Server => {
    const serverOptions = {
      headersTimeout: options.limits?.headersTimeoutMs,
      requestTimeout: options.limits?.requestTimeoutMs,
      connectionsCheckingInterval: 1000,
      maxHeaderSize: MAX_HEADER_BYTES,
    };
    const serve = (raw: IncomingMessage, res: ServerResponse) => {
      if (!options.fastPing(raw, res)) handler(raw, res);
    };
    const server = options.tls
      ? createHttpsServer(
          {
            ...serverOptions,
            cert: options.tls.cert,
            key: options.tls.key,
            // A connection that never starts its handshake is bounded like one that never sends headers.
            handshakeTimeout: options.limits?.headersTimeoutMs ?? 10_000,
          },
          serve,
        )
      : createServer(serverOptions, serve);
    server.maxHeadersCount = 0;
    return server;
  };
}

/**
 * GET /rest/system/ping, what health checks and monitors send most, answered before Fastify when it
 * passes every check (admit) and nothing else is special about it: Fastify's routing and its request
 * and reply objects cost more than the answer. Anything else (a body, a wrong key, a connection that
 * must close, a draining worker) goes to Fastify, which answers it the usual way.
 */
export function fastPing(options: {
  admit: (raw: IncomingMessage) => HttpError | boolean;
  isDraining: () => boolean;
  /** The headers every response carries. */
  headers: Record<string, string>;
}) {
  const pingHeaders = {
    ...options.headers,
    'content-type': JSON_TYPE,
    'content-length': String(Buffer.byteLength(PING_BODY)),
  };
  return (raw: IncomingMessage, res: ServerResponse): boolean => {
    if (raw.method !== 'GET' || raw.url !== '/rest/system/ping') return false;
    if (raw.headers['content-length'] !== undefined || raw.headers['transfer-encoding'] !== undefined) {
      return false;
    }
    // A response still queued behind an earlier one (pipelining) has no socket yet: the earlier ones
    // decide whether the connection closes, which Fastify's count of them keeps (ConnectionRequests).
    if (!res.socket || options.isDraining() || busy(raw.socket)) return false;
    if (options.admit(raw) !== true) return false;
    res.writeHead(200, pingHeaders);
    res.end(PING_BODY);
    return true;
  };
}
