import { request, type RequestOptions } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { deviceId } from '../../shared/device-id.ts';
import type { Logger } from '../../shared/logger.ts';
import type { DeviceCredentials } from '../bep/tls-options.ts';

/** What `default` in options.globalAnnounceServers stands for: Syncthing's public servers. */
export const DEFAULT_DISCOVERY_SERVERS = [
  'https://discovery.syncthing.net/v2/?noannounce&id=LYXKCHX-VI3NYZR-ALCJBHF-WMZYSPK-QG6QJA3-MPFYMSO-U56GTUK-NA2MIAW',
  'https://discovery-v4.syncthing.net/v2/?nolookup&id=LYXKCHX-VI3NYZR-ALCJBHF-WMZYSPK-QG6QJA3-MPFYMSO-U56GTUK-NA2MIAW',
  'https://discovery-v6.syncthing.net/v2/?nolookup&id=LYXKCHX-VI3NYZR-ALCJBHF-WMZYSPK-QG6QJA3-MPFYMSO-U56GTUK-NA2MIAW',
];

// Syncthing's rhythm (lib/discover/global.go): announce again after 30 min, or after 5 min when an
// announcement failed, unless the server says otherwise.
const REANNOUNCE_MS = 30 * 60_000;
const RETRY_MS = 5 * 60_000;
// A lookup that found addresses is trusted this long before the server is asked again.
const LOOKUP_CACHE_MS = 5 * 60_000;
const REQUEST_TIMEOUT_MS = 30_000;
// The addresses to announce are looked at this often, and announced this long after they change (a
// relay joined, a listen address moved), as Syncthing does on ListenAddressesChanged.
const WATCH_MS = 10_000;
const CHANGED_DELAY_MS = 2000;
// A server's answer larger than this is not an address list.
const MAX_ANSWER = 64 * 1024;

export interface DiscoveryServer {
  /** The URL as configured, which names it in the status. */
  text: string;
  url: URL;
  /** The device ID its certificate must have (`?id=`); undefined: verified as any HTTPS server. */
  id: string | undefined;
  insecure: boolean;
  announce: boolean;
  lookup: boolean;
}

/** The servers of options.globalAnnounceServers (`default` expanded); malformed entries are reported. */
export function discoveryServers(texts: readonly string[]): {
  servers: DiscoveryServer[];
  problems: string[];
} {
  const servers: DiscoveryServer[] = [];
  const problems: string[] = [];
  for (const text of texts.flatMap((entry) => (entry === 'default' ? DEFAULT_DISCOVERY_SERVERS : [entry]))) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      problems.push(`${text}: not a URL`);
      continue;
    }
    if (url.protocol !== 'https:') {
      problems.push(`${text}: a discovery server is reached over https://`);
      continue;
    }
    const params = url.searchParams;
    servers.push({
      text,
      url,
      id: params.get('id') ?? undefined,
      insecure: params.has('insecure'),
      announce: !params.has('noannounce'),
      lookup: !params.has('nolookup'),
    });
  }
  return { servers, problems };
}

export interface GlobalDiscoveryOptions {
  servers: DiscoveryServer[];
  credentials: DeviceCredentials;
  /** The addresses to announce: the sync listener's. */
  addresses: () => string[];
  logger: Logger;
  /** How often the addresses are looked at for a change (10 s). */
  watchMs?: number;
}

/**
 * Syncthing's global discovery (v3): this device's addresses announced to each server over HTTPS with
 * the device certificate (the server learns who announces from it), and other devices' addresses looked
 * up there. A server is pinned by the device ID of its certificate (`?id=`). A miss is not asked again
 * before the server's Retry-After.
 */
export class GlobalDiscovery {
  readonly #options: GlobalDiscoveryOptions;
  readonly #errors = new Map<string, string | null>();
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #lookups = new Map<string, { addresses: string[]; until: number }>();
  #closed = false;
  #watch: NodeJS.Timeout | undefined;
  /** What was last announced, to tell a change, and whether a change is to be announced already. */
  #announced = '';
  #changeAnnounced = false;

  constructor(options: GlobalDiscoveryOptions) {
    this.#options = options;
    for (const server of options.servers) this.#errors.set(server.text, null);
  }

  /** Syncthing's discoveryStatus entries: `global@URL` with the last error of each server. */
  get status(): Record<string, { error: string | null }> {
    return Object.fromEntries([...this.#errors].map(([text, error]) => [`global@${text}`, { error }]));
  }

  start(): void {
    const announcing = this.#options.servers.filter((server) => server.announce);
    for (const server of announcing) this.#schedule(server, 0);
    if (announcing.length === 0) return;
    this.#watch = setInterval(() => {
      if (this.#changeAnnounced || JSON.stringify(this.#options.addresses()) === this.#announced) return;
      this.#changeAnnounced = true;
      for (const server of announcing) this.#schedule(server, CHANGED_DELAY_MS);
    }, this.#options.watchMs ?? WATCH_MS);
    this.#watch.unref();
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#watch);
    for (const timer of this.#timers.values()) clearTimeout(timer);
  }

  /** The addresses the servers know for `device`; [] on a miss or an error (each recorded). */
  async lookup(device: string): Promise<string[]> {
    const cached = this.#lookups.get(device);
    if (cached && cached.until > Date.now()) return cached.addresses;
    const found = new Set<string>();
    let retryAfterMs = Infinity;
    for (const server of this.#options.servers.filter((each) => each.lookup)) {
      const url = new URL(server.url);
      url.search = '';
      url.searchParams.set('device', device);
      try {
        const answer = await this.#request(server, url, 'GET');
        if (answer.status === 200) {
          const body = JSON.parse(answer.body) as { addresses?: unknown };
          if (Array.isArray(body.addresses)) {
            for (const address of body.addresses) if (typeof address === 'string') found.add(address);
          }
          this.#errors.set(server.text, null);
        } else if (answer.status === 404) {
          retryAfterMs = Math.min(retryAfterMs, answer.retryAfterMs ?? 60_000);
          this.#errors.set(server.text, null);
        } else {
          throw new Error(`answered ${answer.status}`);
        }
      } catch (error) {
        this.#errors.set(server.text, `lookup of ${device}: ${(error as Error).message}`);
        retryAfterMs = Math.min(retryAfterMs, 60_000);
      }
    }
    const addresses = [...found];
    const until = Date.now() + (addresses.length > 0 ? LOOKUP_CACHE_MS : retryAfterMs);
    if (Number.isFinite(until)) this.#lookups.set(device, { addresses, until });
    return addresses;
  }

  #schedule(server: DiscoveryServer, delayMs: number): void {
    if (this.#closed) return;
    clearTimeout(this.#timers.get(server.text));
    const timer = setTimeout(() => void this.#announce(server), delayMs);
    timer.unref();
    this.#timers.set(server.text, timer);
  }

  async #announce(server: DiscoveryServer): Promise<void> {
    const addresses = this.#options.addresses();
    this.#announced = JSON.stringify(addresses);
    this.#changeAnnounced = false;
    try {
      const answer = await this.#request(server, server.url, 'POST', JSON.stringify({ addresses }));
      if (answer.status < 200 || answer.status > 299) {
        throw new Error(`answered ${answer.status}${answer.body ? `: ${answer.body.trim()}` : ''}`);
      }
      if (this.#errors.get(server.text) !== null) {
        this.#options.logger.info({ server: server.text }, `announced to ${server.text} again`);
      }
      this.#errors.set(server.text, null);
      this.#schedule(server, answer.reannounceAfterMs ?? REANNOUNCE_MS);
    } catch (error) {
      const message = `announcement to ${server.text}: ${(error as Error).message}`;
      if (this.#errors.get(server.text) !== message) {
        this.#options.logger.warn({ slot: `discovery-${server.text}` }, `global discovery: ${message}`);
      }
      this.#errors.set(server.text, message);
      this.#schedule(server, RETRY_MS);
    }
  }

  #request(
    server: DiscoveryServer,
    url: URL,
    method: 'GET' | 'POST',
    body?: string,
  ): Promise<{ status: number; body: string; retryAfterMs?: number; reannounceAfterMs?: number }> {
    const { cert, key } = this.#options.credentials;
    // Pinned by device ID, or insecure: the CA is not what vouches for the server then.
    const verify = server.id === undefined && !server.insecure;
    const options: RequestOptions = {
      method,
      cert,
      key,
      rejectUnauthorized: verify,
      minVersion: 'TLSv1.2',
      timeout: REQUEST_TIMEOUT_MS,
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      agent: false,
    };
    return new Promise((resolve, reject) => {
      const req = request(url, options, (response) => {
        if (server.id !== undefined) {
          const raw = (response.socket as TLSSocket).getPeerCertificate?.()?.raw;
          const seen = raw ? deviceId(raw) : 'no certificate';
          if (seen !== server.id) {
            response.destroy();
            reject(new Error(`the server's certificate is ${seen}, not the ${server.id} its URL names`));
            return;
          }
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER) response.destroy(new Error(`an answer over ${MAX_ANSWER} bytes`));
          else chunks.push(chunk);
        });
        response.on('error', reject);
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            retryAfterMs: seconds(response.headers['retry-after']),
            reannounceAfterMs: seconds(response.headers['reannounce-after']),
          }),
        );
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)));
      req.on('error', reject);
      req.end(body);
    });
  }
}

function seconds(header: string | string[] | undefined): number | undefined {
  const value = Number(Array.isArray(header) ? header[0] : header);
  return Number.isFinite(value) && value >= 0 ? value * 1000 : undefined;
}
