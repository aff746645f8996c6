import type { Configuration } from '../shared/config/defaults.ts';
import type { SyncListening } from '../shared/ipc/protocol.ts';
import type { Logger } from '../shared/logger.ts';
import { settingLabel } from '../shared/settings.ts';
import {
  bindHost,
  formatSyncUrl,
  isRelayAddress,
  listenAddresses,
  parseSyncUrl,
  type SyncUrl,
} from '../shared/sync-url.ts';
import { SaveRefused, type PrepareSave } from './config-store.ts';
import type { Listeners, PendingListener } from './listeners.ts';

// A listen address that could not be bound (another program has the port) is tried again this often.
const RETRY_MS = 60_000;

/** A configured address the supervisor serves, under the slot its bind address names. */
interface Served {
  text: string;
  url: SyncUrl;
  slot: string;
}

interface Plan {
  serve: Served[];
  /** Every configured address that is not served, with why. */
  notServed: Record<string, string>;
}

/**
 * The sync protocol's listeners, owned by the supervisor like the GUI's so that a restart refuses no
 * device: at the flag's address, else at each TCP address of options.listenAddresses (`default`
 * expanded as Syncthing does; relays are the worker's, QUIC is Syncthing's alone and reported as not
 * served). A port that cannot be bound at start is reported and tried again, as Syncthing does, rather
 * than keeping the REST interface from serving. A saved change binds the new addresses first and is
 * refused if one cannot be; an address that stays keeps its socket (and a port 0 its port), one that
 * goes stops accepting, and connections accepted so far are served on (lib/connections/service.go
 * CommitConfiguration).
 */
export class SyncListener {
  readonly #listeners: Listeners;
  readonly #logger: Logger;
  readonly #flag: string | undefined;
  #plan: Plan = { serve: [], notServed: {} };
  /** Where each slot listens. */
  readonly #bound = new Map<string, string>();
  /** Why a slot does not listen, while it is tried again. */
  readonly #errors = new Map<string, string>();
  readonly #retries = new Map<string, NodeJS.Timeout>();
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
    for (const { text, slot } of this.#plan.serve)
      listening[text] = { bound: this.#bound.get(slot) ?? null, error: this.#errors.get(slot) ?? null };
    for (const [text, error] of Object.entries(this.#plan.notServed))
      listening[text] = { bound: null, error };
    return listening;
  }

  /** Binds what the configuration (or the flag) says; resolves even when it cannot, having said why. */
  async start(config: Configuration, onChange: (listening: SyncListening) => void): Promise<void> {
    this.#onChange = onChange;
    this.#plan = this.#planFor(config);
    await Promise.all(this.#plan.serve.map((served) => this.#bind(served)));
  }

  /** The save step for options.listenAddresses: new addresses are bound before the file is written. */
  readonly saveStep: PrepareSave = async (from, to) => {
    if (this.overridden) return undefined;
    if (sameList(from.options.listenAddresses, to.options.listenAddresses)) return undefined;
    const plan = this.#planFor(to);
    const pending: Array<{ served: Served; listener: PendingListener }> = [];
    // Addresses going away, and those of them let go early: a new address on the same port (another
    // host, 0.0.0.0 to 127.0.0.1) can be bound only once the old socket is closed.
    const leaving = this.#plan.serve.filter(({ slot }) => !plan.serve.some((next) => next.slot === slot));
    const released: Served[] = [];
    const restore = () => {
      for (const { listener } of pending) listener.abort();
      for (const served of released.splice(0))
        void this.#bind(served).then(() => this.#onChange(this.listening));
    };
    try {
      // An address that stays keeps its socket, or its retries while another program holds its port.
      for (const served of plan.serve) {
        if (this.#bound.has(served.slot) || this.#errors.has(served.slot)) continue;
        const bind = () => this.#prepare(served, 'options.listenAddresses');
        let listener: PendingListener;
        try {
          listener = await bind();
        } catch (error) {
          const samePort = leaving.filter(
            (old) => old.url.port === served.url.port && this.#bound.has(old.slot) && !released.includes(old),
          );
          if (!inUse(error) || samePort.length === 0) throw error;
          for (const old of samePort) {
            this.#listeners.unbind(old.slot);
            this.#bound.delete(old.slot);
            released.push(old);
          }
          listener = await bind();
        }
        pending.push({ served, listener });
      }
    } catch (error) {
      restore();
      throw new SaveRefused((error as Error).message);
    }
    return {
      commit: () => {
        const kept = new Set(plan.serve.map(({ slot }) => slot));
        for (const slot of [...this.#bound.keys(), ...this.#errors.keys()])
          if (!kept.has(slot)) this.#forget(slot);
        this.#plan = plan;
        for (const { served, listener } of pending) this.#committed(served, listener);
        this.#onChange(this.listening);
      },
      abort: restore,
    };
  };

  stop(): void {
    for (const retry of this.#retries.values()) clearTimeout(retry);
    this.#retries.clear();
  }

  #planFor(config: Configuration): Plan {
    const texts = this.#flag !== undefined ? [this.#flag] : listenAddresses(config.options.listenAddresses);
    const plan: Plan = { serve: [], notServed: {} };
    const bySlot = new Map<string, string>();
    for (const text of texts) {
      if (isRelayAddress(text) && this.#flag === undefined) continue;
      const url = parseSyncUrl(text);
      if (typeof url === 'string') {
        plan.notServed[text] = url;
        continue;
      }
      const slot = `sync ${formatSyncUrl({ ...url, host: bindHost(url) })}`;
      const same = bySlot.get(slot);
      if (same !== undefined) plan.notServed[text] = `the same address as ${same}, which is served`;
      else {
        bySlot.set(slot, text);
        plan.serve.push({ text, url, slot });
      }
    }
    return plan;
  }

  #prepare({ url, slot }: Served, label: string): Promise<PendingListener> {
    const address = { host: bindHost(url), port: url.port, ipv6Only: url.scheme === 'tcp6' };
    return this.#listeners.prepare('sync', address, label, slot);
  }

  async #bind(served: Served): Promise<void> {
    const { slot } = served;
    const label = this.overridden ? settingLabel('syncAddress') : 'options.listenAddresses';
    try {
      const pending = await this.#prepare(served, label);
      // A save since may have dropped the address, or kept it as another plan's entry.
      const current = this.#plan.serve.find((entry) => entry.slot === slot);
      if (!current) {
        pending.abort();
        return;
      }
      const retried = this.#errors.has(slot);
      this.#committed(current, pending);
      if (retried) this.#logger.info({ address: this.#bound.get(slot) }, 'listening for devices now');
    } catch (error) {
      if (!this.#plan.serve.some((entry) => entry.slot === slot)) return;
      const message = (error as Error).message;
      if (this.#errors.get(slot) !== message) {
        this.#logger.warn(
          { slot: 'sync-listener' },
          `${message}; other devices cannot connect there until it can (tried again every ${RETRY_MS / 1000} s)`,
        );
      }
      this.#errors.set(slot, message);
      const retry = setTimeout(() => {
        this.#retries.delete(slot);
        void this.#bind(served).then(() => this.#onChange(this.listening));
      }, RETRY_MS);
      retry.unref();
      this.#retries.set(slot, retry);
    }
  }

  #committed(served: Served, pending: PendingListener): void {
    const { bound } = pending.commit();
    this.#bound.set(
      served.slot,
      formatSyncUrl({ scheme: served.url.scheme, host: bound.host, port: bound.port }),
    );
    this.#errors.delete(served.slot);
    clearTimeout(this.#retries.get(served.slot));
    this.#retries.delete(served.slot);
  }

  /** An address no longer configured: its socket stops accepting, and it is tried no more. */
  #forget(slot: string): void {
    this.#listeners.unbind(slot);
    this.#bound.delete(slot);
    this.#errors.delete(slot);
    clearTimeout(this.#retries.get(slot));
    this.#retries.delete(slot);
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, at) => item === b[at]);
}

function inUse(error: unknown): boolean {
  return ((error as Error).cause as NodeJS.ErrnoException | undefined)?.code === 'EADDRINUSE';
}
