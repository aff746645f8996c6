#!/usr/bin/env node
// The `syncd` command: `syncd serve` runs the service, the other commands talk to a running one.
// Each branch loads only its own code: the service does not pay for the commands, nor they for it.
import { catchSignals } from '../supervisor/signals.ts';

const argv = process.argv.slice(2);
if (argv[0] === 'serve') {
  // Before anything is loaded or awaited: a signal in the first moments must not take its default action.
  const signals = catchSignals();
  const { serveFromCommandLine } = await import('../supervisor/serve.ts');
  process.exit(await serveFromCommandLine(argv.slice(1), signals));
}
const { runCli } = await import('./cli/run.ts');
const { text } = await import('node:stream/consumers');
process.exit(
  await runCli(argv, {
    env: process.env,
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
    readInput: () => text(process.stdin),
  }),
);
