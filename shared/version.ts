import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from './paths.ts';

/** syncd's version, in the shape of Syncthing's GET /rest/system/version. */
export interface VersionInfo {
  arch: string;
  codename: string;
  date: string;
  isBeta: boolean;
  isCandidate: boolean;
  isRelease: boolean;
  longVersion: string;
  os: string;
  stamp: string;
  tags: string[];
  user: string;
  version: string;
}

// Go's names for Node's architectures, as Syncthing reports them.
const ARCH: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm' };

let cached: VersionInfo | undefined;

/** Read once from the package: its version, and its manifest's time as the date of this copy. */
export function versionInfo(): VersionInfo {
  if (cached) return cached;
  const manifest = join(packageRoot, 'package.json');
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  const date = new Date(Math.floor(statSync(manifest).mtimeMs / 1000) * 1000);
  const arch = ARCH[process.arch] ?? process.arch;
  const tagged = `v${version}`;
  const prerelease = version.includes('-');
  cached = {
    arch,
    codename: 'syncd',
    date: date.toISOString().replace('.000Z', 'Z'),
    isBeta: prerelease,
    isCandidate: /-rc/.test(version),
    isRelease: !prerelease,
    longVersion: `syncd ${tagged} (node ${process.version} ${process.platform}-${arch})`,
    os: process.platform,
    stamp: String(date.getTime() / 1000),
    tags: [],
    user: '',
    version: tagged,
  };
  return cached;
}
