import { STATUS_CODES } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { asHttpError, codeOf, type ErrorBody, errorBody, HttpError } from './http-errors.ts';

/** The answer to an error a route or Fastify threw: the error catalog's shape, 500 only for our own. */
export function replyWithError(
  thrown: Error & { statusCode?: number },
  request: FastifyRequest,
  reply: FastifyReply,
): ErrorBody {
  // A configuration a request made that cannot be used or saved says so (see routes/config.ts).
  const error = asHttpError(thrown) as Error & { statusCode?: number };
  if (error instanceof HttpError) {
    reply.headers(error.headers);
    reply.code(error.statusCode);
    return errorBody(error.code, error.message);
  }
  // Fastify's own refusals (a body too large, a malformed JSON body) keep their status and message.
  const statusCode = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
  if (statusCode >= 500) {
    request.log.error({ err: error, method: request.method, url: request.url }, 'request failed');
    reply.code(500);
    return errorBody('SYNCD_ERR_INTERNAL', 'internal error; the worker log has the details');
  }
  const answer = errorBody(codeOf(statusCode), error.message);
  reply.code(statusCode);
  return { ...answer, statusCode, error: STATUS_CODES[statusCode] ?? answer.error };
}
