// The versioner a folder's configuration asks for (lib/versioner/versioner.go New).
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
import type { Versioner, VersionedFolder } from './versioner.ts';

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
