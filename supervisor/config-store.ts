import type { Configuration } from '../shared/config/defaults.ts';
import { configFileText } from '../shared/config/config-file.ts';
import { writeFileAtomic } from '../shared/home.ts';
import type { SaveAnswer } from '../shared/ipc/protocol.ts';

/** What a save must do besides writing the file: prepared before the write, finished or undone after. */
export interface SaveStep {
  commit(): Promise<void> | void;
  abort(): void;
}

/**
 * Refuses a save (400) with a message naming why, before anything is written; `prepare` below throws it.
 */
export class SaveRefused extends Error {}

export type PrepareSave = (from: Configuration, to: Configuration) => Promise<SaveStep | undefined>;

/** Several saves' steps as one: prepared in order; when one refuses, those prepared are undone. */
export function allSteps(...prepares: PrepareSave[]): PrepareSave {
  return async (from, to) => {
    const steps: SaveStep[] = [];
    try {
      for (const prepare of prepares) {
        const step = await prepare(from, to);
        if (step) steps.push(step);
      }
    } catch (error) {
      for (const step of steps) step.abort();
      throw error;
    }
    if (steps.length === 0) return undefined;
    return {
      commit: async () => {
        for (const step of steps) await step.commit();
      },
      abort: () => {
        for (const step of steps) step.abort();
      },
    };
  };
}

/**
 * The configuration and its file, kept by the supervisor for every worker: workers send changed
 * configurations, saves happen one at a time, each from the revision it was made from, and a save
 * happens whole or not at all: what it moves (the GUI listener) is prepared first, then the file is
 * written, then the move is finished.
 */
export class ConfigStore {
  readonly #path: string;
  #prepare: PrepareSave;
  #config: Configuration;
  #revision = 1;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(path: string, config: Configuration, prepare: PrepareSave = async () => undefined) {
    this.#path = path;
    this.#config = config;
    this.#prepare = prepare;
  }

  /** What every save does besides writing the file, once what it acts on exists. */
  prepareWith(prepare: PrepareSave): void {
    this.#prepare = prepare;
  }

  get config(): Configuration {
    return this.#config;
  }

  get revision(): number {
    return this.#revision;
  }

  /** Writes the file as the configuration is now (at start, after a migration or a generated key). */
  async write(): Promise<void> {
    await writeFileAtomic(this.#path, configFileText(this.#config), 0o600);
  }

  save(config: Configuration, base: number): Promise<SaveAnswer> {
    const result = this.#queue.then(() => this.#save(config, base));
    this.#queue = result;
    return result;
  }

  async #save(config: Configuration, base: number): Promise<SaveAnswer> {
    if (base !== this.#revision) {
      return {
        ok: false,
        status: 409,
        message: 'the configuration changed while this change was made; make it again',
      };
    }
    let step: SaveStep | undefined;
    try {
      step = await this.#prepare(this.#config, config);
    } catch (error) {
      if (error instanceof SaveRefused) return { ok: false, status: 400, message: error.message };
      return { ok: false, status: 500, message: (error as Error).message };
    }
    try {
      await writeFileAtomic(this.#path, configFileText(config), 0o600);
    } catch (error) {
      step?.abort();
      return { ok: false, status: 500, message: (error as Error).message };
    }
    this.#config = config;
    this.#revision += 1;
    await step?.commit();
    return { ok: true, revision: this.#revision };
  }
}
