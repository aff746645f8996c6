import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package's root folder: the nearest one above this module whose package.json is syncd's. The
 * sources and the bundles sit at different depths below it, and once installed it is
 * node_modules/syncd.
 */
export const packageRoot = findRoot(dirname(fileURLToPath(import.meta.url)));
/** The build, as `npm ci` and `npm run build` make it. */
export const distDir = join(packageRoot, 'dist');
/** The built command that `npm start` runs as `syncd serve`. */
export const syncdBin = join(distDir, 'bin', 'syncd.js');
/** syncd's own web GUI, as the build makes it from gui/. */
export const ownGuiDir = join(distDir, 'gui');
/** The built health check that the Docker image runs. */
export const healthcheckScript = join(distDir, 'scripts', 'healthcheck.js');

function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'syncd'
    )
      return dir;
    if (dirname(dir) === dir) throw new Error(`syncd: no package.json of syncd above ${from}`);
  }
}
