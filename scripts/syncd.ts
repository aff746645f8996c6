#!/usr/bin/env node
// The `syncd` command: `syncd serve` runs the service, the other commands talk to a running one.
// `serve` loads the supervisor alone: the commands' code would cost the service start time and memory.
const argv = process.argv.slice(2);
if (argv[0] === 'serve') {
  const { supervisorMain } = await import('../supervisor/run-supervisor.ts');
  process.exit(await supervisorMain(argv.slice(1), process.env));
}
const { runCli } = await import('./cli/run.ts');
process.exit(
  await runCli(argv, {
    env: process.env,
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
  }),
);
