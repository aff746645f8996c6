import { baseOf, parentOf, temporaryName } from '../files/folder-fs.ts';
import { archiveFile } from './archive.ts';
import { cleanByDay } from './clean.ts';
import type { VersionerContext } from './context.ts';
import { asOperation, failed } from './errors.ts';
import { listVersions } from './list.ts';
import { moveFile } from './move.ts';
import { clearForRestore, moveVersionBack } from './restore.ts';
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
   * file not on disk, after restoring it). The current file is set aside in the versions under its
   * temporary name beside it (the trash copy it would overwrite is the one being restored), then made
   * the trash copy once the restore is done. Unlike Syncthing, a failed restore is reported and puts
   * the current file back: Syncthing (v1.22 too) discards the restore's error and makes the current
   * file the trash copy, overwriting a copy that was not restored; and for a file in a subdirectory
   * it sets it aside under `dir/dir/…` (its tagger joins the directory twice), which fails.
   */
  restore(name: string, versionTime: Date): Promise<void> {
    return asOperation(this.type, 'restore', async () => {
      const context = this.#context;
      const aside = await clearForRestore(context, name, (base) => baseOf(temporaryName(base)));
      try {
        // The tagged name of a trash copy is its name: the copy is restored whatever its time, as in Syncthing.
        await moveVersionBack(context, name, versionTime, name);
      } catch (error) {
        if (aside) await this.#putBack(aside, name, error);
        throw error;
      }
      if (!aside) return;
      const versions = context.versions.made();
      await versions.rename(aside, name).catch((error: unknown) => {
        throw failed(`restored; keeping the replaced file ${aside} as the trash copy ${name}`, error);
      });
    });
  }

  clean(): Promise<void> {
    return asOperation(this.type, 'clean', () => cleanByDay(this.#context, this.#cleanoutDays));
  }

  // The file set aside for a restore that failed goes back where it was; if it cannot, the restore's
  // error says where it is.
  async #putBack(aside: string, name: string, cause: unknown): Promise<void> {
    const context = this.#context;
    try {
      if (await context.folderFs.lstat(name)) throw new Error(`${name} exists`);
      const from = context.versions.made().directory(parentOf(aside));
      try {
        const to = context.folderFs.directory(parentOf(name));
        try {
          await moveFile(from, baseOf(aside), to, baseOf(name));
        } finally {
          to.close();
        }
      } finally {
        from.close();
      }
    } catch (error) {
      const reason = cause instanceof Error ? cause.message : String(cause);
      throw failed(
        `${reason}; the current file, set aside as ${aside} in the versions, was not put back`,
        error,
      );
    }
  }
}
