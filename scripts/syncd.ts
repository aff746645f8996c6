#!/usr/bin/env node
// The `syncd` command: `syncd serve` runs the service, the other commands talk to a running one.
import { runCli } from './cli/run.ts';

const code = await runCli(process.argv.slice(2), {
  env: process.env,
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
});
process.exit(code);
