import type { Configuration } from '../../shared/config/defaults.ts';
import type { SyncListening } from '../../shared/ipc/protocol.ts';
import { type Interfaces, listenerAddresses } from '../../shared/listener-addresses.ts';
import type { Logger } from '../../shared/logger.ts';
import type { DeviceCredentials } from '../bep/tls-options.ts';
import type { WorkerConfig } from '../config/worker-config.ts';
import type { EventLog } from '../events/event-log.ts';
import { DiscoveryCache } from './discovery-cache.ts';
import { discoveryServers, GlobalDiscovery } from './global-discovery.ts';
import { LOCAL_TTL_MS, LocalDiscovery } from './local-discovery.ts';

export interface DiscoveryOptions {
  myId: string;
  credentials: DeviceCredentials;
  config: WorkerConfig;
  /** Where the sync listener is bound, as the supervisor says. */
  listening: () => SyncListening;
  /** This machine's network interfaces (os.networkInterfaces), whose LAN addresses are announced. */
  interfaces?: () => Interfaces;
  /** A flag's word on local and global discovery, over the configuration's; null: not given. */
  announce: { local: boolean | null; global: boolean | null };
  events: EventLog;
  logger: Logger;
  /** A configured device's addresses became known: it may be dialed now. */
  discovered: (device: string) => void;
}

/**
 * The discovery cache (device → addresses) and what feeds it: local discovery, global discovery and
 * hints (POST /rest/system/discovery). Each kind runs while enabled (a flag, else the configuration's
 * options), and starts or stops as a saved configuration changes it.
 */
export class Discovery {
  readonly cache = new DiscoveryCache();
  readonly #options: DiscoveryOptions;
  #local: LocalDiscovery | undefined;
  #global: GlobalDiscovery | undefined;
  #globalProblems: string[] = [];
  readonly #unsubscribe: () => void;

  constructor(options: DiscoveryOptions) {
    this.#options = options;
    this.#unsubscribe = options.config.onChange((from, to) => void this.#apply(from, to));
  }

  async start(): Promise<void> {
    await this.#apply(undefined, this.#options.config.current);
  }

  get localEnabled(): boolean {
    return this.#options.announce.local ?? this.#options.config.current.options.localAnnounceEnabled;
  }

  get globalEnabled(): boolean {
    return this.#options.announce.global ?? this.#options.config.current.options.globalAnnounceEnabled;
  }

  /** The addresses known for `device`: the cache's, and the global servers' when enabled. */
  async lookup(device: string): Promise<string[]> {
    const known = this.cache.addresses(device);
    if (!this.#global) return known;
    const found = await this.#global.lookup(device);
    if (found.length > 0) this.#record(device, 'global', found, Infinity);
    return [...new Set([...known, ...found])];
  }

  /** A hint (POST /rest/system/discovery): kept for the device for as long as the service runs. */
  hint(device: string, address: string): void {
    this.#record(device, 'hint', [address], Infinity);
  }

  /** Syncthing's status fields of discovery; present only while some discovery is enabled. */
  status(): Record<string, unknown> {
    const enabled = this.localEnabled || this.globalEnabled;
    if (!enabled) return {};
    const discoveryStatus = { ...this.#local?.status, ...this.#global?.status };
    const discoveryErrors = Object.fromEntries(
      [
        ...Object.entries(discoveryStatus).filter(([, { error }]) => error !== null),
        ...this.#globalProblems.map((problem) => [problem, { error: problem }]),
      ].map(([name, value]) => [name, (value as { error: string }).error]),
    );
    return {
      discoveryEnabled: true,
      discoveryMethods: Object.keys(discoveryStatus).length,
      discoveryStatus,
      discoveryErrors,
    };
  }

  close(): void {
    this.#unsubscribe();
    this.#local?.close();
    this.#global?.close();
    this.#local = undefined;
    this.#global = undefined;
  }

  /**
   * The addresses this device announces: where its sync listener is bound, with its LAN addresses
   * (see shared/listener-addresses.ts). Syncthing's local discovery announces them all, its global
   * discovery leaves the LAN ones out when options.announceLANAddresses is false (lib/discover/local.go,
   * global.go), read at each announcement.
   */
  #announced(kind: 'local' | 'global'): string[] {
    const lan = kind === 'local' || this.#options.config.current.options.announceLANAddresses;
    return listenerAddresses(this.#options.listening(), lan, this.#options.interfaces?.());
  }

  #record(device: string, source: 'local' | 'global' | 'hint', addresses: string[], ttlMs: number): void {
    if (device === this.#options.myId || addresses.length === 0) return;
    const added = this.cache.set(device, source, addresses, ttlMs);
    if (!added) return;
    this.#options.events.log('DeviceDiscovered', { device, addrs: this.cache.addresses(device) });
    this.#options.discovered(device);
  }

  async #apply(from: Configuration | undefined, to: Configuration): Promise<void> {
    const { logger, myId, credentials } = this.#options;
    const local = this.localEnabled;
    const localMoved =
      from !== undefined &&
      (from.options.localAnnouncePort !== to.options.localAnnouncePort ||
        from.options.localAnnounceMCAddr !== to.options.localAnnounceMCAddr);
    if ((!local || localMoved) && this.#local) {
      this.#local.close();
      this.#local = undefined;
    }
    if (local && !this.#local) {
      this.#local = new LocalDiscovery({
        myId,
        port: to.options.localAnnouncePort,
        multicastAddress: to.options.localAnnounceMCAddr,
        addresses: () => this.#announced('local'),
        found: (device, addresses) => this.#record(device, 'local', addresses, LOCAL_TTL_MS),
        logger,
      });
      await this.#local.start();
    }
    const global = this.globalEnabled;
    const serversMoved =
      from !== undefined &&
      String(from.options.globalAnnounceServers) !== String(to.options.globalAnnounceServers);
    if ((!global || serversMoved) && this.#global) {
      this.#global.close();
      this.#global = undefined;
    }
    if (global && !this.#global) {
      const { servers, problems } = discoveryServers(to.options.globalAnnounceServers);
      this.#globalProblems = problems;
      for (const problem of problems)
        logger.warn({ slot: 'discovery-servers' }, `options.globalAnnounceServers: ${problem}`);
      this.#global = new GlobalDiscovery({
        servers,
        credentials,
        addresses: () => this.#announced('global'),
        logger,
      });
      this.#global.start();
    }
  }
}
