import type { FolderDirectory } from '../files/folder-fs.ts';

/**
 * The names in each directory a pull writes in, by their case-folded form, so that a new name that
 * differs from one already there only in case is refused as Syncthing refuses it when the folder's
 * caseSensitiveFS is false (its default): a second file that a case-insensitive device could not
 * hold, or that would replace the first on a case-insensitive disk (lib/fs/casefs.go). Each
 * directory is listed once per pull, and what the pull makes is added as it goes.
 */
export class CaseNames {
  // Each directory's listing, shared by the files pulled into it at once.
  readonly #dirs = new Map<string, Promise<Map<string, string>>>();

  /** The name in `dir` that `base` differs from only in case, if there is one. */
  async clash(dir: FolderDirectory, base: string): Promise<string | undefined> {
    let listing = this.#dirs.get(dir.name);
    if (!listing) {
      listing = dir.readdir().then(
        (entries) => new Map(entries.map((entry) => [fold(entry), entry])),
        (error: Error) => {
          // Listed again by the next file: this one fails with why.
          this.#dirs.delete(dir.name);
          throw error;
        },
      );
      this.#dirs.set(dir.name, listing);
    }
    const names = await listing;
    const found = names.get(fold(base));
    if (found !== undefined && found !== base) return found;
    names.set(fold(base), base);
    return undefined;
  }
}

// Syncthing's UnicodeLowercaseNormalized: NFC, then lower case.
function fold(name: string): string {
  return name.normalize('NFC').toLowerCase();
}

/** Syncthing's ErrCaseConflict, in its words. */
export function caseConflict(given: string, real: string): Error {
  return new Error(
    `remote "${given}" uses different upper or lowercase characters than local "${real}"; change the casing on either side to match the other`,
  );
}
