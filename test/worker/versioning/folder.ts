import { utimesSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { versionerFor } from '../../../worker/versioning/for-folder.ts';
import type { Versioner, VersioningError } from '../../../worker/versioning/versioner.ts';

/** A local time, to the second: tags are local times. */
export const local = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0) =>
  new Date(y, mo - 1, d, h, mi, s);

/**
 * A folder `folder` (its marker and `tree`) in a test directory, and the versioner `versioning` asks
 * for, on a clock the test sets; warnings are collected.
 */
export function versionedFolder(
  t: Test,
  versioning: { type: string; params?: Record<string, string>; fsPath?: string },
  tree: Record<string, unknown> = {},
  beside: Record<string, unknown> = {},
) {
  const dir = t.testdir({ folder: { '.stfolder': {}, ...tree }, ...beside });
  const root = join(dir, 'folder');
  const clock = { now: local(2022, 3, 15, 10, 11, 12) };
  const warnings: VersioningError[] = [];
  const folder = {
    id: 'f',
    path: root,
    markerName: '.stfolder',
    versioning: {
      type: versioning.type,
      params: versioning.params ?? {},
      cleanupIntervalS: 3600,
      fsPath: versioning.fsPath ?? '',
      fsType: 'basic',
    },
  };
  const versioner = versionerFor(
    folder,
    () => clock.now,
    (warning) => warnings.push(warning),
  ) as Versioner;
  return { dir, root, versions: join(root, '.stversions'), clock, versioner, warnings, folder };
}

/** Sets a file's mtime (and atime) to `at`. */
export function setMtime(path: string, at: Date): void {
  utimesSync(path, at, at);
}
