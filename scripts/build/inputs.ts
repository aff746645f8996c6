import { createHash } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

// Where a build records what it was made from, relative to the package's folder.
export const INPUTS_FILE = join('dist', 'build-inputs.json');

// What shapes a build besides the modules it bundles: the build itself, the compilers' settings, and
// the dependencies (node_modules is covered by the lock file, not file by file).
const ALWAYS = [
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.types.json',
  'scripts/build.ts',
  'scripts/build/inputs.ts',
  'scripts/build/replace-build.ts',
];

interface Recorded {
  node: string;
  /** Source path to its SHA-256, every path relative to the package's folder. */
  inputs: Record<string, string>;
  outputs: string[];
}

async function digest(path: string): Promise<string | undefined> {
  try {
    return createHash('sha256')
      .update(await readFile(path))
      .digest('hex');
  } catch {
    return undefined;
  }
}

/** Records, once dist/ is whole, the sources it was built from and the files it must hold. */
export async function recordBuildInputs(
  root: string,
  bundled: readonly string[],
  outputs: readonly string[],
) {
  const sources = [...new Set([...ALWAYS, ...bundled.filter((path) => !path.includes('node_modules/'))])];
  const inputs: Record<string, string> = {};
  for (const path of sources.sort()) {
    inputs[path] = (await digest(join(root, path))) ?? '';
  }
  const recorded: Recorded = { node: process.version, inputs, outputs: [...outputs].sort() };
  await writeFile(join(root, INPUTS_FILE), `${JSON.stringify(recorded, null, 1)}\n`);
}

/**
 * Whether dist/ is the build of the sources as they are now: same Node, every recorded source
 * unchanged, every output present. A source added since is only reached through one that changed.
 * Anything unreadable or missing means no: a build too many costs seconds, one too few a stale test.
 */
export async function isBuildCurrent(root: string): Promise<boolean> {
  let recorded: Recorded;
  try {
    recorded = JSON.parse(await readFile(join(root, INPUTS_FILE), 'utf8')) as Recorded;
  } catch {
    return false;
  }
  if (recorded.node !== process.version || !recorded.inputs || !Array.isArray(recorded.outputs)) return false;
  for (const path of ALWAYS) if (!(path in recorded.inputs)) return false;
  for (const [path, hash] of Object.entries(recorded.inputs)) {
    if (((await digest(join(root, path))) ?? '') !== hash) return false;
  }
  for (const path of recorded.outputs) {
    if (!(await stat(join(root, path)).catch(() => undefined))) return false;
  }
  return true;
}
