import { archiveFile } from './archive.ts';
import { cleanByName, pruneVersionsOf, type VersionsToRemove } from './clean.ts';
import type { VersionerContext } from './context.ts';
import { asOperation } from './errors.ts';
import { listVersions } from './list.ts';
import { restoreFile } from './restore.ts';
import { tagFilename } from './tags.ts';
import type { FileVersion, Versioner } from './versioner.ts';

/**
 * simple and staggered (lib/versioner/simple.go, staggered.go): versions tagged with the archive
 * time, the ones `toRemove` picks of a file removed after each archive and at each cleanout; the two
 * differ only in that choice.
 */
export class TaggedVersioner implements Versioner {
  readonly type: 'simple' | 'staggered';
  readonly #context: VersionerContext;
  readonly #toRemove: VersionsToRemove;

  constructor(type: 'simple' | 'staggered', context: VersionerContext, toRemove: VersionsToRemove) {
    this.type = type;
    this.#context = context;
    this.#toRemove = toRemove;
  }

  archive(name: string): Promise<void> {
    return asOperation(this.type, 'archive', async () => {
      await archiveFile(this.#context, name, tagFilename);
      await pruneVersionsOf(this.#context, name, this.#toRemove);
    });
  }

  versions(): Promise<Record<string, FileVersion[]>> {
    return asOperation(this.type, 'get versions', () => listVersions(this.#context.versions));
  }

  restore(name: string, versionTime: Date): Promise<void> {
    return asOperation(this.type, 'restore', () =>
      restoreFile(this.#context, name, versionTime, tagFilename),
    );
  }

  clean(): Promise<void> {
    return asOperation(this.type, 'clean', () => cleanByName(this.#context, this.#toRemove));
  }
}
