import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { SyncModel } from '../../service/model.ts';
import { HttpError } from '../http-errors.ts';

/** How long a request that needs the model waits for a worker's start to acquire it. */
export const HOLD_FOR_MODEL_MS = 10_000;

export interface ModelWait {
  model: () => SyncModel | undefined;
  /** Resolves true once this worker holds the service, false after `ms`. */
  whenHeld: (ms: number) => Promise<boolean>;
  isDraining: () => boolean;
}

/**
 * A hook for the routes that need the model, so that a restart goes unnoticed but for a moment's
 * wait: a worker that is starting holds the request until it has acquired the service (at most
 * HOLD_FOR_MODEL_MS; 503 after that, as heldModel answers). A worker that has let the service go
 * (it is stopping) drops the connection unanswered, as a restarting Syncthing does: a browser sends
 * a GET again on a new connection, which reaches the next worker, and a client that cannot sees a
 * restart, not an error.
 */
export function awaitModel(wait: ModelWait) {
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const goOn = () => {
      if (wait.model() || !wait.isDraining()) return done();
      reply.hijack();
      request.raw.socket.destroy();
    };
    if (wait.model() || wait.isDraining()) return goOn();
    wait.whenHeld(HOLD_FOR_MODEL_MS).then(goOn, (error: Error) => done(error));
  };
}

/** The model of the service this worker holds; 503 with Retry-After for the moment it changes hands. */
export function heldModel(options: { model: () => SyncModel | undefined }): SyncModel {
  const model = options.model();
  if (!model) {
    throw new HttpError(
      'SYNCD_ERR_SERVICE_UNAVAILABLE',
      'the index is changing hands between workers (a restart); try again in a moment',
      { 'retry-after': '1' },
    );
  }
  return model;
}
