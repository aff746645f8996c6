/*
 * Syncthing's file versioning (lib/versioner, v1.19.2): what a folder does with a file it is about to
 * delete or replace for another device, and the versions it keeps. versionerFor (for-folder.ts) picks the type.
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
