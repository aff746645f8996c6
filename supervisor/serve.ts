import type { SignalQueue } from './signals.ts';

/**
 * `syncd serve ARGS` from a command line: the worker is started first, so that Node's start and the
 * loading of the worker's code overlap the supervisor's own (it waits for its init); then the
 * supervisor is loaded and run. Resolves with the exit code.
 */
export async function serveFromCommandLine(argv: readonly string[], signals: SignalQueue): Promise<number> {
  const [{ startWorkerEarly }, { wantsHelp }] = await Promise.all([
    import('./worker-process.ts'),
    import('../shared/settings.ts'),
  ]);
  const firstWorker = wantsHelp(argv) ? undefined : startWorkerEarly();
  const { serveCommand } = await import('./run.ts');
  return serveCommand(argv, process.env, signals, firstWorker);
}
