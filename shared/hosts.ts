import { type Address, formatAddress } from './address.ts';

// The names a browser uses for this machine's own loopback interface.
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/**
 * The Host header values the service accepts, or null for any. A service on a loopback address
 * accepts only loopback names (and the extra names given, for a reverse proxy): a web page whose own
 * name was rebound to 127.0.0.1 still sends its own name, and is refused (DNS rebinding).
 */
export function allowedHostsFor(bound: Address, extra: readonly string[]): string[] | null {
  if (!isLoopback(bound.host) && extra.length === 0) return null;
  const own = formatAddress(bound).slice(0, -`:${bound.port}`.length).toLowerCase();
  return [...new Set([...LOOPBACK_NAMES, own, ...extra.map((host) => host.toLowerCase())])];
}

/** Whether a request's Host header (with or without a port) names an allowed host. */
export function hostAllowed(header: string | undefined, allowed: readonly string[] | null): boolean {
  if (allowed === null) return true;
  // HTTP/1.0 clients may send none; a browser always sends one.
  if (header === undefined || header === '') return true;
  return allowed.includes(hostName(header));
}

/**
 * The host part of a Host header: `[::1]:8384` is `[::1]`, `Example.test:80` is `example.test`. IPv6
 * addresses take their shortest form, so that `[0:0:0:0:0:0:0:1]` is `[::1]`.
 */
export function hostName(header: string): string {
  const lower = header.trim().toLowerCase();
  if (lower.startsWith('[')) {
    const literal = lower.slice(0, lower.indexOf(']') + 1);
    try {
      return new URL(`http://${literal}/`).hostname;
    } catch {
      return literal;
    }
  }
  const colon = lower.lastIndexOf(':');
  return colon === -1 ? lower : lower.slice(0, colon);
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
