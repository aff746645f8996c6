import { archiveFile } from './archive.ts';
import { cleanByDay } from './clean.ts';
import type { VersionerContext } from './context.ts';
import { asOperation } from './errors.ts';
import { listVersions } from './list.ts';
import { restoreVersion } from './restore.ts';
import type { FileVersion, Versioner } from './versioner.ts';

/*
 * lib/versioner/trashcan.go: one untagged copy per name, the last deleted or replaced one (each
 * archive overwrites the one before), its mtime the deletion time, which cleanoutDays judges by.
 */
export class TrashcanVersioner implements Versioner {
  readonly type = 'trashcan';
  readonly #context: VersionerContext;
  readonly #cleanoutDays: number;

  constructor(context: VersionerContext, cleanoutDays: number) {
    this.#context = context;
    this.#cleanoutDays = cleanoutDays;
  }

  archive(name: string): Promise<void> {
    return asOperation(this.type, 'archive', async () => {
      await archiveFile(this.#context, name, (base) => base);
    });
  }

  versions(): Promise<Record<string, FileVersion[]>> {
    return asOperation(this.type, 'get versions', () => listVersions(this.#context.versions));
  }

  /**
   * trashcan.go Restore, as v1.22 fixed it (#7965: 1.19.2 answered an error for every restore of a
   * file not on disk, after restoring it): the current file, set aside while the trash copy is
   * restored (see restoreVersion), becomes the trash copy. The tagged name of a trash copy is its
   * name: the copy is restored whatever its time, as in Syncthing. Unlike Syncthing, a failed restore
   * is reported and puts the current file back: Syncthing (v1.22 too) discards the restore's error and
   * makes the current file the trash copy, overwriting a copy that was not restored; and for a file in
   * a subdirectory it sets it aside under `dir/dir/…` (its tagger joins the directory twice), which
   * fails.
   */
  restore(name: string, versionTime: Date): Promise<void> {
    return asOperation(this.type, 'restore', () =>
      restoreVersion(this.#context, name, versionTime, name, (base) => base),
    );
  }

  clean(): Promise<void> {
    return asOperation(this.type, 'clean', () => cleanByDay(this.#context, this.#cleanoutDays));
  }
}
