// Syncthing's addresses of the sync protocol: `tcp://HOST:PORT` (also tcp4, tcp6), in listen addresses
// (options.listenAddresses) and device addresses alike; `default` and `dynamic` are words of their own.

export type SyncScheme = 'tcp' | 'tcp4' | 'tcp6';

export interface SyncUrl {
  scheme: SyncScheme;
  /** Without brackets; '' or an unspecified address (0.0.0.0, ::) means every interface. */
  host: string;
  port: number;
}

/** Syncthing's port for the sync protocol, when an address names none. */
export const DEFAULT_SYNC_PORT = 22000;
/** Syncthing's pool of public relays, the relays `default` stands for (lib/config/config.go). */
export const DEFAULT_RELAY_POOL = 'dynamic+https://relays.syncthing.net/endpoint';
/**
 * What `default` in options.listenAddresses stands for (lib/config/config.go DefaultListenAddresses),
 * less QUIC, which syncd does not serve.
 */
export const DEFAULT_LISTEN_ADDRESSES = ['tcp://0.0.0.0:22000', DEFAULT_RELAY_POOL] as const;

const SCHEMES: ReadonlySet<string> = new Set(['tcp', 'tcp4', 'tcp6']);
// Relays are reached over connections the worker makes (worker/relay/), not through a listening socket.
const RELAY_SCHEMES: ReadonlySet<string> = new Set(['relay', 'dynamic+http', 'dynamic+https']);
// Schemes Syncthing knows that syncd does not serve or dial: named as such, not as malformed.
const OTHER_SCHEMES: ReadonlySet<string> = new Set(['quic', 'quic4', 'quic6', ...RELAY_SCHEMES]);

/**
 * options.listenAddresses as Syncthing reads them (lib/config/optionsconfiguration.go ListenAddresses):
 * `default` expanded in place, each address trimmed and kept once, empty ones dropped.
 */
export function listenAddresses(configured: readonly string[]): string[] {
  const expanded = configured.flatMap((text) =>
    text.trim() === 'default' ? DEFAULT_LISTEN_ADDRESSES : [text],
  );
  return [...new Set(expanded.map((text) => text.trim()).filter((text) => text !== ''))];
}

/** Whether an address names a relay, or a pool of them (relay://, dynamic+https://). */
export function isRelayAddress(text: string): boolean {
  const scheme = /^([a-z0-9+.-]+):\/\//i.exec(text.trim())?.[1]?.toLowerCase();
  return scheme !== undefined && RELAY_SCHEMES.has(scheme);
}

/**
 * A TCP address of the sync protocol, or a sentence saying why the text is not one. A missing port is
 * Syncthing's 22000; a bare HOST:PORT is read as tcp://HOST:PORT.
 */
export function parseSyncUrl(text: string): SyncUrl | string {
  // An empty host is every interface (tcp://:22000), which URL cannot read.
  const trimmed = text
    .trim()
    .replace(/^(tcp6:\/\/)(?=:)/i, '$1[::]')
    .replace(/^([a-z0-9]+:\/\/)(?=:)/i, '$10.0.0.0');
  if (trimmed === 'dynamic' || trimmed === 'default')
    return `"${trimmed}" stands for addresses, it is not one`;
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `tcp://${trimmed}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return `"${text}" is not an address such as tcp://192.0.2.1:22000`;
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (OTHER_SCHEMES.has(scheme)) return `${scheme} addresses are not supported by syncd (only tcp)`;
  if (!SCHEMES.has(scheme)) return `"${text}": unknown scheme ${scheme}:// (tcp://, tcp4:// or tcp6://)`;
  if (url.pathname !== '' && url.pathname !== '/')
    return `"${text}" has a path; an address is tcp://HOST:PORT`;
  const port = url.port === '' ? DEFAULT_SYNC_PORT : Number(url.port);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return { scheme: scheme as SyncScheme, host, port };
}

export function formatSyncUrl({ scheme, host, port }: SyncUrl): string {
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** The address to bind for a listen URL: an empty host is every interface of the scheme's family. */
export function bindHost({ scheme, host }: SyncUrl): string {
  if (host !== '') return host;
  return scheme === 'tcp6' ? '::' : '0.0.0.0';
}
