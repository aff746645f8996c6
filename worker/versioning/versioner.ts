import { resolve } from 'node:path';
import { FolderFs } from '../files/folder-fs.ts';
import type { VersionerContext } from './context.ts';
import { versioningError, VersioningError } from './errors.ts';
import { ExternalVersioner } from './external.ts';
import { goAtoi } from './params.ts';
import { DEFAULT_KEEP, simpleToRemove } from './simple.ts';
import { DEFAULT_MAX_AGE, staggeredToRemove } from './staggered.ts';
import { TaggedVersioner } from './tagged.ts';
import { TrashcanVersioner } from './trashcan.ts';
import { VersionsRoot } from './versions-root.ts';

/*
 * Syncthing's file versioning (lib/versioner, v1.19.2): what a folder does with a file it is about to
 * delete or replace for another device, and the versions it keeps. versioner.go New picks the type.
 */

export { VersioningError } from './errors.ts';

/** One version of a file, as GET /rest/folder/versions lists it (lib/versioner/versioner.go). */
export interface FileVersion {
  versionTime: Date;
  modTime: Date;
  size: number;
}

export interface Versioner {
  readonly type: 'trashcan' | 'simple' | 'staggered' | 'external';
  /** Moves the regular file `name` (relative to the folder, '/'-separated) into the versions; nothing when it is missing. Throws VersioningError. */
  archive(name: string): Promise<void>;
  /** Every version by original name: Syncthing's GET /rest/folder/versions data. external: throws VersioningError "... get versions: version restoration not supported with the current versioner". */
  versions(): Promise<Record<string, FileVersion[]>>;
  /** Restores `name` to the version of `versionTime` (the current file archived first, tagged now). Throws VersioningError. */
  restore(name: string, versionTime: Date): Promise<void>;
  /** The periodic cleanout (cleanoutDays / staggered expiry / nothing for external), empty directories removed. */
  clean(): Promise<void>;
}

export interface VersionedFolder {
  id: string;
  path: string;
  markerName: string;
  versioning: {
    type: string;
    params: Record<string, string>;
    cleanupIntervalS: number;
    fsPath: string;
    fsType: string;
  };
}

/**
 * The versioner a folder's configuration asks for; undefined when versioning.type is ''. Throws
 * VersioningError for an unknown type (Syncthing panics at the folder's start). `now` is the clock of
 * tags and ages; `warn` hears what failed after an operation succeeded (an old version not removed, a
 * time not set), which Syncthing only logs: by default a process warning.
 */
export function versionerFor(
  folder: VersionedFolder,
  now: () => Date = () => new Date(),
  warn: (error: VersioningError) => void = (error) => process.emitWarning(error),
): Versioner | undefined {
  const { type, fsPath } = folder.versioning;
  // The GUI's "none" sends `{type: ''}`, whose params may come back null.
  const params: Record<string, string> = folder.versioning.params ?? {};
  const folderFs = new FolderFs(folder.path, folder.markerName);
  const context = (): VersionerContext => ({
    folderFs,
    versions: new VersionsRoot(folderFs, fsPath, folder.markerName),
    now,
    warn: (op, error) => warn(versioningError(type, op, error)),
  });
  switch (type) {
    case '':
      return undefined;
    case 'trashcan':
      return new TrashcanVersioner(context(), goAtoi(params.cleanoutDays) ?? 0);
    case 'simple': {
      // A negative keep panics in Syncthing (a slice out of range); it is taken as unset.
      const keep = goAtoi(params.keep);
      const cleanoutDays = goAtoi(params.cleanoutDays) ?? 0;
      const kept = keep === undefined || keep < 0 ? DEFAULT_KEEP : keep;
      return new TaggedVersioner('simple', context(), (versions, now) =>
        simpleToRemove(versions, now, kept, cleanoutDays),
      );
    }
    case 'staggered': {
      const maxAge = goAtoi(params.maxAge) ?? DEFAULT_MAX_AGE;
      return new TaggedVersioner('staggered', context(), (versions, now) =>
        staggeredToRemove(versions, now, maxAge),
      );
    }
    case 'external':
      return new ExternalVersioner(folderFs, resolve(folderFs.root), params.command ?? '');
    default:
      throw new VersioningError(`requested versioning type ${JSON.stringify(type)} does not exist`);
  }
}
