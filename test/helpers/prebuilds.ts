import { execFile } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../../shared/paths.ts';

/**
 * better-sqlite3's prebuilt binary as its installer downloads one, made from the one this checkout
 * built, in `folder`; returns the environment that points the installer there. This machine cannot
 * reach the download, and compiling the module again takes minutes: tests that install the package
 * afresh get it as a user with the download does. The installer looks there before downloading.
 */
export async function localPrebuilds(folder: string): Promise<Record<string, string>> {
  const module = join(packageRoot, 'node_modules', 'better-sqlite3');
  const { version } = JSON.parse(await readFile(join(module, 'package.json'), 'utf8')) as { version: string };
  await mkdir(folder, { recursive: true });
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await promisify(execFile)('tar', [
    '-czf',
    join(folder, name),
    '-C',
    module,
    'build/Release/better_sqlite3.node',
  ]);
  return { npm_config_better_sqlite3_local_prebuilds: folder };
}
