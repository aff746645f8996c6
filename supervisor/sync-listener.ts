import type { Configuration } from '../shared/config/defaults.ts';
import type { SyncListening } from '../shared/ipc/protocol.ts';
import type { Logger } from '../shared/logger.ts';
import { settingLabel } from '../shared/settings.ts';
import {
  bindHost,
  DEFAULT_LISTEN_URL,
  formatSyncUrl,
  parseSyncUrl,
  type SyncUrl,
} from '../shared/sync-url.ts';
import { SaveRefused, type PrepareSave } from './config-store.ts';
import type { Listeners, PendingListener } from './listeners.ts';

// A listen address that could not be bound (another program has the port) is tried again this often.
const RETRY_MS = 60_000;

interface Plan {
  /** The address served, and the text it was configured as. */
  serve: { text: string; url: SyncUrl } | undefined;
  /** Every configured address that is not served, with why. */
  notServed: Record<string, string>;
}

/**
 * The sync protocol's listener, owned by the supervisor like the GUI's so that a restart refuses no
 * device: at the flag's address, else at the first TCP address of options.listenAddresses (QUIC and
 * relays are Syncthing's alone and reported as not served). A port that cannot be bound at start is
 * reported and tried again, as Syncthing does, rather than keeping the REST interface from serving; a
 * saved change binds the new address first and is refused if it cannot.
 */
export class SyncListener {
  readonly #listeners: Listeners;
  readonly #logger: Logger;
  readonly #flag: string | undefined;
  #plan: Plan = { serve: undefined, notServed: {} };
  #bound: string | null = null;
  #error: string | null = null;
  #retry: NodeJS.Timeout | undefined;
  #onChange: (listening: SyncListening) => void = () => {};

  constructor(options: { listeners: Listeners; logger: Logger; flag: string | undefined }) {
    this.#listeners = options.listeners;
    this.#logger = options.logger;
    this.#flag = options.flag;
  }

  get overridden(): boolean {
    return this.#flag !== undefined;
  }

  /** Where each configured address is bound, or why not. */
  get listening(): SyncListening {
    const listening: SyncListening = {};
    const { serve, notServed } = this.#plan;
    if (serve) listening[serve.text] = { bound: this.#bound, error: this.#error };
    for (const [text, error] of Object.entries(notServed)) listening[text] = { bound: null, error };
    return listening;
  }

  /** Binds what the configuration (or the flag) says; resolves even when it cannot, having said why. */
  async start(config: Configuration, onChange: (listening: SyncListening) => void): Promise<void> {
    this.#onChange = onChange;
    this.#plan = this.#planFor(config);
    await this.#bind();
  }

  /** The save step for options.listenAddresses: the new address is bound before the file is written. */
  readonly saveStep: PrepareSave = async (from, to) => {
    if (this.overridden) return undefined;
    if (sameList(from.options.listenAddresses, to.options.listenAddresses)) return undefined;
    const plan = this.#planFor(to);
    let pending: PendingListener | undefined;
    if (plan.serve) {
      const { url } = plan.serve;
      try {
        pending = await this.#listeners.prepare(
          'sync',
          { host: bindHost(url), port: url.port },
          'options.listenAddresses',
        );
      } catch (error) {
        throw new SaveRefused((error as Error).message);
      }
    }
    return {
      commit: () => {
        this.#plan = plan;
        clearTimeout(this.#retry);
        if (pending) this.#committed(pending);
        else {
          this.#listeners.unbind('sync');
          this.#bound = null;
          this.#error = null;
        }
        this.#onChange(this.listening);
      },
      abort: () => pending?.abort(),
    };
  };

  stop(): void {
    clearTimeout(this.#retry);
  }

  #planFor(config: Configuration): Plan {
    const texts = this.#flag !== undefined ? [this.#flag] : config.options.listenAddresses;
    const plan: Plan = { serve: undefined, notServed: {} };
    for (const text of texts) {
      const parsed = parseSyncUrl(text === 'default' ? DEFAULT_LISTEN_URL : text);
      if (typeof parsed === 'string') plan.notServed[text] = parsed;
      else if (plan.serve) plan.notServed[text] = `only one TCP address is served, ${plan.serve.text}`;
      else plan.serve = { text, url: parsed };
    }
    return plan;
  }

  async #bind(): Promise<void> {
    const serve = this.#plan.serve;
    if (!serve) return;
    const label = this.overridden ? settingLabel('syncAddress') : 'options.listenAddresses';
    try {
      const pending = await this.#listeners.prepare(
        'sync',
        { host: bindHost(serve.url), port: serve.url.port },
        label,
      );
      this.#committed(pending);
      if (this.#retry) this.#logger.info({ address: this.#bound }, 'listening for devices now');
    } catch (error) {
      const message = (error as Error).message;
      if (this.#error !== message) {
        this.#logger.warn(
          { slot: 'sync-listener' },
          `${message}; other devices cannot connect until it can (tried again every ${RETRY_MS / 1000} s)`,
        );
      }
      this.#error = message;
      this.#bound = null;
      this.#retry = setTimeout(() => void this.#bind().then(() => this.#onChange(this.listening)), RETRY_MS);
      this.#retry.unref();
    }
  }

  #committed(pending: PendingListener): void {
    const { bound } = pending.commit();
    const url = this.#plan.serve?.url;
    this.#bound = formatSyncUrl({ scheme: url?.scheme ?? 'tcp', host: bound.host, port: bound.port });
    this.#error = null;
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, at) => item === b[at]);
}
