import type { Configuration } from '../../shared/config/defaults.ts';
import type { SyncListening } from '../../shared/ipc/protocol.ts';
import type { Logger } from '../../shared/logger.ts';
import { isRelayAddress, listenAddresses } from '../../shared/sync-url.ts';
import type { DeviceCredentials } from '../bep/tls-options.ts';
import type { WorkerConfig } from '../config/worker-config.ts';
import type { RelayUrl } from './relay-connection.ts';
import { RelayListener } from './relay-listener.ts';
import type { SessionInvitation } from './relay-messages.ts';

export interface RelayListenersOptions {
  config: WorkerConfig;
  credentials: DeviceCredentials;
  logger: Logger;
  invited: (invitation: SessionInvitation, relay: RelayUrl, relayIp: string) => void;
}

/**
 * The relay addresses of options.listenAddresses, each joined while options.relaysEnabled: started and
 * stopped as a saved configuration changes them, without a restart (lib/connections/service.go
 * CommitConfiguration; relay_listen.go Valid).
 */
export class RelayListeners {
  readonly #options: RelayListenersOptions;
  readonly #listeners = new Map<string, RelayListener>();
  readonly #unsubscribe: () => void;

  constructor(options: RelayListenersOptions) {
    this.#options = options;
    this.#unsubscribe = options.config.onChange((_from, to) => this.#apply(to));
  }

  start(): void {
    this.#apply(this.#options.config.current);
  }

  /** Each relay address, as connectionServiceStatus shows a listener. */
  status(): Record<string, { error: string | null; lanAddresses: string[]; wanAddresses: string[] }> {
    const out: ReturnType<RelayListeners['status']> = {};
    for (const [text, listener] of this.#listeners) {
      const { error, url } = listener.status;
      out[text] = { error, lanAddresses: url ? [url] : [], wanAddresses: url ? [url] : [] };
    }
    return out;
  }

  /** The relays joined now, as the supervisor's listening sockets are told: for discovery to announce. */
  listening(): SyncListening {
    const out: SyncListening = {};
    for (const [text, listener] of this.#listeners)
      out[text] = { bound: listener.status.url, error: listener.status.error };
    return out;
  }

  async close(): Promise<void> {
    this.#unsubscribe();
    const stopping = [...this.#listeners.values()].map((listener) => listener.stop());
    this.#listeners.clear();
    await Promise.all(stopping);
  }

  #apply(config: Configuration): void {
    const wanted = config.options.relaysEnabled
      ? listenAddresses(config.options.listenAddresses).filter(isRelayAddress)
      : [];
    for (const [text, listener] of this.#listeners) {
      if (wanted.includes(text)) continue;
      this.#listeners.delete(text);
      void listener.stop();
    }
    for (const text of wanted) {
      if (this.#listeners.has(text)) continue;
      const { credentials, logger, invited } = this.#options;
      this.#listeners.set(text, new RelayListener(text, { credentials, logger, invited }));
    }
  }
}
