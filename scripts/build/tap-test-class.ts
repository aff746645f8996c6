// Builds tap's Test class for the plugins package.json names, when the one installed was built for
// others: as `npm ci` or `npm install` in the checkout ends (npm's prepare) and before `npm test` runs
// tap (npm's pretest). package.json leaves out @tapjs/typescript (tsx loads the TypeScript; the plugin
// would load ts-node into every test process as well). tap rebuilds the class itself when it finds it
// stale, but its runner has already read the old plugins' loaders, and gives them to every test file of
// that run: in a fresh clone the first `npm test` cost 100 CPU-seconds more (5m34s instead of 4m40s
// here). The build takes ~9 s, part of installing rather than of the first test run; npm's other
// prepares (`npx syncd`, `npm pack`, a git dependency's install) skip it. `npx tap build` always builds.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../../shared/paths.ts';

const { npm_lifecycle_event: event, npm_command: command, INIT_CWD: from } = process.env;
const installingHere =
  (command === 'ci' || command === 'install') && from !== undefined && resolve(from) === resolve(packageRoot);
if (event === 'prepare' && !installingHere) process.exit(0);

const { TapConfig } = await import('@tapjs/config');
const wanted = (await TapConfig.load()).pluginSignature;
// The class tap built, as @tapjs/test loads it, with the plugins it was built with.
const built = fileURLToPath(
  new URL('../../test-built/dist/esm/index.js', import.meta.resolve('@tapjs/test')),
);
const source = await readFile(built, 'utf8').catch(() => '');
const signature = /^export const signature = `([^`]*)`/m.exec(source)?.[1];
if (signature?.trim() === wanted) {
  process.stdout.write('tap: its Test class has the configured plugins\n');
} else {
  const { execa } = await import('execa');
  await execa('tap', ['build'], { cwd: packageRoot, preferLocal: true, stdio: 'inherit' });
}
