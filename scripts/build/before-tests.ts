// tap's `before` step: builds dist/ unless it is the build of the sources as they are, because the
// process tests run the built service. After `npm ci` (whose prepare step builds) the first test run
// starts at once.
import { fileURLToPath } from 'node:url';
import { isBuildCurrent } from './inputs.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
if (await isBuildCurrent(root)) process.stdout.write('build: dist/ is current, not rebuilt\n');
else await import('../build.ts');
