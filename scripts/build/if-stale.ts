// Builds dist/ unless it is the build of the sources as they are: npm's prepare step and tap's
// `before` step. After `npm ci` (whose prepare builds) the first test run starts at once, and `npx
// syncd` in a checkout, which npm installs as a link and prepares, does not rebuild the checkout's
// dist/ under a running service or test. `npm run build` always builds.
import { fileURLToPath } from 'node:url';
import { isBuildCurrent } from './inputs.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
if (await isBuildCurrent(root)) process.stdout.write('build: dist/ is current, not rebuilt\n');
else await import('../build.ts');
