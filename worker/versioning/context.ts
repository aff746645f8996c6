import type { FolderFs } from '../files/folder-fs.ts';
import type { VersioningOp } from './errors.ts';
import type { VersionsRoot } from './versions-root.ts';

/** What every internal versioner (lib/versioner/trashcan.go, simple.go, staggered.go) works with. */
export interface VersionerContext {
  readonly folderFs: FolderFs;
  readonly versions: VersionsRoot;
  /** The clock: tags, ages and the trashcan's deletion time are read from it. */
  readonly now: () => Date;
  /**
   * Told what failed after the operation itself succeeded (an old version left in place, a time not
   * set), which Syncthing only logs: the operation is not failed for it, nor is it kept silent.
   */
  readonly warn: (op: VersioningOp, error: Error) => void;
}
