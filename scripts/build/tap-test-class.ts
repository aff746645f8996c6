// Builds tap's Test class for the plugins package.json names, before `npm test` runs tap (npm's
// pretest), when the one installed was built for others. package.json leaves out @tapjs/typescript
// (tsx loads the TypeScript; the plugin would load ts-node into every test process as well). tap
// rebuilds the class itself when it finds it stale, but its runner has already read the old plugins'
// loaders, and gives them to every test file of that run: in a fresh clone the first `npm test` cost
// 100 CPU-seconds more (5m34s instead of 4m40s here). `npx tap build` always builds.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { TapConfig } from '@tapjs/config';
import { execa } from 'execa';
import { packageRoot } from '../../shared/paths.ts';

const wanted = (await TapConfig.load()).pluginSignature;
// The class tap built, as @tapjs/test loads it, with the plugins it was built with.
const built = fileURLToPath(
  new URL('../../test-built/dist/esm/index.js', import.meta.resolve('@tapjs/test')),
);
const source = await readFile(built, 'utf8').catch(() => '');
const signature = /^export const signature = `([^`]*)`/m.exec(source)?.[1];
if (signature?.trim() === wanted) process.stdout.write('tap: its Test class has the configured plugins\n');
else await execa('tap', ['build'], { cwd: packageRoot, preferLocal: true, stdio: 'inherit' });
