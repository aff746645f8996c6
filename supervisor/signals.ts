import type { SupervisorSignal } from './supervisor.ts';

const SIGNALS: readonly SupervisorSignal[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export interface SignalQueue {
  /** Delivers the signals received so far, then every later one, to `handler`. */
  deliverTo(handler: (signal: SupervisorSignal) => void): void;
  /** Stops catching: the signals take their default action again. */
  release(): void;
}

/**
 * Catches SIGINT, SIGTERM and SIGHUP from now on and keeps them until the supervisor can act on them.
 * Called first thing in `syncd serve`, before any module is loaded or anything awaited: until a
 * handler exists, SIGHUP kills the process and SIGTERM ends it with status 143 instead of exit code 0.
 */
export function catchSignals(process: Pick<NodeJS.Process, 'on' | 'off'> = globalThis.process): SignalQueue {
  const queued: SupervisorSignal[] = [];
  let deliver: ((signal: SupervisorSignal) => void) | undefined;
  const onSignal = (signal: SupervisorSignal) => (deliver ? deliver(signal) : queued.push(signal));
  for (const signal of SIGNALS) process.on(signal, onSignal);
  return {
    deliverTo(handler) {
      deliver = handler;
      for (const signal of queued.splice(0)) handler(signal);
    },
    release() {
      for (const signal of SIGNALS) process.off(signal, onSignal);
    },
  };
}
