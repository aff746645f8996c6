import { hostname } from 'node:os';
import type { Configuration } from '../../shared/config/defaults.ts';
import { prepare } from '../../shared/config/decode.ts';
import type { SaveAnswer } from '../../shared/ipc/protocol.ts';

/** Why a change was not saved: `status` is the HTTP status to answer with; nothing was changed. */
export class ChangeFailed extends Error {
  readonly status: 400 | 409 | 500;
  constructor(status: 400 | 409 | 500, message: string) {
    super(message);
    this.name = 'ChangeFailed';
    this.status = status;
  }
}

export type ConfigListener = (from: Configuration, to: Configuration) => void;

// A change made from a configuration that another worker changed meanwhile is made again on the new one.
const ATTEMPTS = 3;

/**
 * This worker's copy of the configuration. The supervisor keeps the configuration and its file: a
 * change is made here on the latest copy, checked (a ConfigProblem names what is wrong, and nothing is
 * sent), then sent whole to be saved; every worker hears of every saved change through `apply`, which
 * tells the listeners what changed (events, and later the service).
 */
export class WorkerConfig {
  readonly myId: string;
  readonly #save: (config: Configuration, base: number) => Promise<SaveAnswer>;
  readonly #listeners: ConfigListener[] = [];
  #config: Configuration;
  #revision: number;

  constructor(options: {
    config: Configuration;
    revision: number;
    myId: string;
    save: (config: Configuration, base: number) => Promise<SaveAnswer>;
  }) {
    this.#config = options.config;
    this.#revision = options.revision;
    this.myId = options.myId;
    this.#save = options.save;
  }

  /** The configuration now; never change it in place (use `change`). */
  get current(): Configuration {
    return this.#config;
  }

  /** Calls `listener` with every saved change from now on; returns what stops that. */
  onChange(listener: ConfigListener): () => void {
    this.#listeners.push(listener);
    return () => {
      const index = this.#listeners.indexOf(listener);
      if (index >= 0) this.#listeners.splice(index, 1);
    };
  }

  /**
   * Makes `edit` on a copy of the configuration, checks the result and saves it. Resolves once every
   * worker has it; throws a ConfigProblem (the edit is wrong) or a ChangeFailed (it could not be saved).
   * An edit that changes nothing saves nothing.
   */
  async change(edit: (draft: Configuration) => void): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const draft = structuredClone(this.#config);
      edit(draft);
      const next = prepare(draft, this.myId, hostname());
      if (JSON.stringify(next) === JSON.stringify(this.#config)) return;
      const answer = await this.#save(next, this.#revision);
      if (answer.ok) return;
      if (answer.status !== 409 || attempt === ATTEMPTS)
        throw new ChangeFailed(answer.status, answer.message);
    }
  }

  /** A saved configuration, from the supervisor: the newest wins. */
  apply(config: Configuration, revision: number): void {
    if (revision <= this.#revision) return;
    const from = this.#config;
    this.#config = config;
    this.#revision = revision;
    for (const listener of this.#listeners) listener(from, config);
  }
}
