import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { WorkerConfig } from '../config/worker-config.ts';
import { HttpError } from './http-errors.ts';

/**
 * Answers only while gui.debugging is true, as Syncthing's whenDebugging (lib/api/api.go): 403
 * otherwise. Routes under /rest/debug: routes/debug.ts, and db.ts's file and peerCompletion.
 */
export function whenDebugging(config: WorkerConfig) {
  return (_request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    if (config.current.gui.debugging) return done();
    done(
      new HttpError(
        'SYNCD_ERR_DEBUGGING_DISABLED',
        'debugging disabled: set gui.debugging to true (PATCH /rest/config/gui) for /rest/debug',
      ),
    );
  };
}
