import { type Address, formatAddress, parseAddress } from '../shared/address.ts';
import type { Configuration } from '../shared/config/defaults.ts';
import { allowedHostsFor } from '../shared/hosts.ts';
import type { Overridden, Serving } from '../shared/ipc/protocol.ts';
import type { Settings } from '../shared/settings.ts';
import { SaveRefused, type SaveStep } from './config-store.ts';
import type { Listeners } from './listeners.ts';

/** How the REST interface is served: the configuration's `gui`, where a flag or variable does not win. */
export interface GuiServing {
  address: Address;
  apiKey: string;
  tls: boolean;
  overridden: Overridden;
}

export function guiServing(config: Configuration, settings: Settings): GuiServing {
  const overridden: Overridden = {
    guiAddress: settings.given.has('address'),
    apiKey: settings.apiKey !== undefined,
    tls: settings.given.has('tls') || settings.given.has('tlsCert'),
  };
  return {
    address: overridden.guiAddress ? settings.address : (parseAddress(config.gui.address) as Address),
    apiKey: settings.apiKey ?? config.gui.apiKey,
    tls: overridden.tls ? settings.tls : config.gui.useTLS,
    overridden,
  };
}

/**
 * What a save does besides writing the file, for the GUI settings no flag overrides: a new address is
 * bound before the file is written (a port that cannot be bound refuses the save) and the old one is
 * let go after; a new key is what every worker checks from then on. `gui.useTLS` waits for the next
 * start (the workers say a restart is required).
 */
export function guiSaveStep(options: {
  listeners: Listeners;
  settings: Settings;
  overridden: Overridden;
  /** Tells the workers what they serve with now. */
  serve: (serving: Partial<Serving>) => void;
  /** The GUI listens at a new address: the address files follow. */
  moved: (address: string) => Promise<void>;
}): (from: Configuration, to: Configuration) => Promise<SaveStep | undefined> {
  const { listeners, settings, overridden, serve, moved } = options;
  return async (from, to) => {
    const newAddress = !overridden.guiAddress && from.gui.address !== to.gui.address;
    const newKey = !overridden.apiKey && from.gui.apiKey !== to.gui.apiKey;
    if (!newAddress && !newKey) return undefined;
    let pending: Awaited<ReturnType<Listeners['prepare']>> | undefined;
    if (newAddress) {
      const address = parseAddress(to.gui.address) as Address;
      try {
        pending = await listeners.prepare('gui', address);
      } catch (error) {
        throw new SaveRefused(`gui.address: ${(error as Error).message.replace(/^[^:]*: /, '')}`);
      }
    }
    return {
      commit: async () => {
        const serving: Partial<Serving> = {};
        if (newKey) serving.apiKey = to.gui.apiKey;
        if (pending) {
          const { bound } = pending.commit();
          serving.address = formatAddress(bound);
          serving.allowedHosts = allowedHostsFor(bound, settings.allowedHosts);
          await moved(serving.address);
        }
        serve(serving);
      },
      abort: () => pending?.abort(),
    };
  };
}
