import type { FileVersion } from './versioner.ts';
import type { VersionsRoot } from './versions-root.ts';
import { parseTag, untagFilename } from './tags.ts';
import { walkTree } from './walk.ts';

/**
 * Every version by original name, as lib/versioner/util.go retrieveVersions answers GET
 * /rest/folder/versions: names '/'-separated and NFC; times to the whole second; a name without a tag
 * (every trashcan file) listed under itself with its mtime as its version time; a tag that is not a
 * local `YYYYMMDD-HHMMSS` time left out. A symlink, or what cannot be read, is skipped and never
 * followed (Syncthing skips a symlink too; what it cannot read fails the whole answer).
 */
export async function listVersions(versions: VersionsRoot): Promise<Record<string, FileVersion[]>> {
  // A Map, so that a name such as `__proto__` is a name like any other.
  const found = new Map<string, FileVersion[]>();
  const fs = versions.existing();
  if (!fs) return {};
  const add = (name: string, version: FileVersion) => {
    const list = found.get(name);
    if (list) list.push(version);
    else found.set(name, [version]);
  };
  await walkTree(fs, {
    directory: () => undefined,
    unreadable: () => undefined,
    entry: (path, stats) => {
      if (!stats.isFile()) return;
      const modTime = new Date(Math.floor(stats.mtimeMs / 1000) * 1000);
      const normalized = path.normalize('NFC');
      const [name, tag] = untagFilename(normalized);
      if (name === '' || tag === '') {
        add(normalized, { versionTime: modTime, modTime, size: stats.size });
        return;
      }
      const versionTime = parseTag(tag);
      if (versionTime) add(name, { versionTime, modTime, size: stats.size });
    },
  });
  return Object.fromEntries(found);
}
