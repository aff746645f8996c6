import type { Configuration, FolderConfiguration } from '../../shared/config/defaults.ts';
import type { WorkerConfig } from '../config/worker-config.ts';
import { FolderRunner, type FolderRunnerOptions } from './folder-runner.ts';
import { folderConcurrency, IoLimiter } from './io-limiter.ts';

/**
 * Every folder of the configuration, run by the worker that holds the service: started with it,
 * added, changed, paused and removed as the configuration is, and stopped when the service is let go.
 * A folder removed from the configuration has its index erased (its files stay).
 */
export class Folders {
  readonly #runners = new Map<string, FolderRunner>();
  readonly #options: FolderRunnerOptions & { config: WorkerConfig };
  #unsubscribe: (() => void) | undefined;
  /** The turns the folders take to scan, pull and clean (options.maxFolderConcurrency), one for all. */
  readonly limiter: IoLimiter;

  constructor(options: Omit<FolderRunnerOptions, 'limiter'> & { config: WorkerConfig }) {
    this.limiter = new IoLimiter(folderConcurrency(options.config.current.options.maxFolderConcurrency));
    this.#options = { ...options, limiter: this.limiter };
  }

  start(): void {
    for (const folder of this.#options.config.current.folders) this.#add(folder);
    this.#unsubscribe = this.#options.config.onChange((from, to) => void this.#changed(from, to));
  }

  get(id: string): FolderRunner | undefined {
    return this.#runners.get(id);
  }

  all(): FolderRunner[] {
    return [...this.#runners.values()];
  }

  async stop(): Promise<void> {
    this.#unsubscribe?.();
    await Promise.all(this.all().map((runner) => runner.stop()));
    this.#runners.clear();
  }

  #drop(id: string): void {
    try {
      this.#options.db.drop(id);
    } catch {
      // The index closed with the service let go: nothing is left to erase.
    }
  }

  #add(folder: FolderConfiguration): void {
    // The hashing threads start now, while the folder is prepared: its first scan does not wait.
    if (!folder.paused) this.#options.hasher.warm();
    const runner = new FolderRunner(folder, this.#options);
    this.#runners.set(folder.id, runner);
    runner.start();
  }

  async #changed(_from: Configuration, to: Configuration): Promise<void> {
    // Syncthing sets the new capacity as it commits a configuration (lib/model/model.go).
    this.limiter.capacity = folderConcurrency(to.options.maxFolderConcurrency);
    const wanted = new Map(to.folders.map((folder) => [folder.id, folder]));
    for (const [id, runner] of this.#runners) {
      if (wanted.has(id)) continue;
      this.#runners.delete(id);
      await runner.stop();
      this.#options.db.drop(id);
      // A scan given up on (its filesystem stopped answering) may still record a batch once it returns.
      void runner.settled.then(() => {
        if (!this.#runners.has(id)) this.#drop(id);
      });
    }
    for (const folder of to.folders) {
      const runner = this.#runners.get(folder.id);
      if (runner) runner.reconfigure(folder);
      else this.#add(folder);
    }
  }
}
