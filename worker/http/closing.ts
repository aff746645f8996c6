import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';

/**
 * Which connections must close, and when. A response with `Connection: close` ends its connection, and
 * Node drops the requests the client had already pipelined behind it, unanswered. So a connection that
 * should close (the worker drains, a restart was asked for on it) closes with the answer to the last
 * request read on it, and reads nothing more from then on. Kept on the socket itself: this runs for
 * every request, and a property costs less than a map or a listener.
 */
export class ConnectionRequests {
  started(request: FastifyRequest): void {
    const socket = request.raw.socket as Tracked;
    socket[unanswered] = (socket[unanswered] ?? 0) + 1;
  }

  closeAfterAnswering(request: FastifyRequest): void {
    (request.raw.socket as Tracked)[closing] = true;
  }

  /** Called as a response begins: the last one known on a closing connection closes it. */
  beforeAnswer(request: FastifyRequest, reply: FastifyReply, draining: boolean): void {
    const socket = request.raw.socket as Tracked;
    const left = (socket[unanswered] ?? 1) - 1;
    socket[unanswered] = left;
    if (draining) socket[closing] = true;
    if (!socket[closing] || left > 0) return;
    reply.header('connection', 'close');
    // inject()'s stand-in socket cannot pause.
    if (typeof socket.pause === 'function') socket.pause();
  }
}

const unanswered = Symbol('requests read and not yet answered');
const closing = Symbol('close once they are');
type Tracked = Socket & { [unanswered]?: number; [closing]?: boolean };

/** Whether a connection has responses still to come, or must close: then it is not answered out of turn. */
export function busy(socket: Socket): boolean {
  const tracked = socket as Tracked;
  return Boolean(tracked[closing] || tracked[unanswered]);
}
