import { type Status, SyncdClient } from './client.ts';
import { notRecorded, resolveTarget } from './target.ts';

export const HEALTH_TIMEOUT_MS = 2000;

/** The environment variable that asks for the sync listeners' check as well (1, true, yes, on). */
export const HEALTHCHECK_SYNC_ENV = 'SYNCD_HEALTHCHECK_SYNC';

/**
 * Pings the service found through the flags given, the environment or the home; never throws. With
 * `sync` (or SYNCD_HEALTHCHECK_SYNC=1) it is healthy only if, besides, every configured TCP sync
 * listener listens, as the service's own status says: a TCP connect could reach another program that
 * holds the port.
 */
export async function checkHealth(
  env: NodeJS.ProcessEnv,
  given: { address?: string; apiKey?: string; home?: string; tls?: boolean; sync?: boolean } = {},
): Promise<{ healthy: boolean; message: string }> {
  try {
    const target = await resolveTarget(given, env);
    const client = new SyncdClient({
      address: target.url,
      ca: target.ca,
      apiKey: target.apiKey,
      timeoutMs: HEALTH_TIMEOUT_MS,
    });
    const sync = given.sync ?? /^(1|true|yes|on)$/i.test(env[HEALTHCHECK_SYNC_ENV] ?? '');
    try {
      // Both at once: together they stay within the one timeout.
      const [answer, status] = await Promise.all([client.ping(), sync ? client.status() : undefined]);
      if (answer?.ping !== 'pong') {
        return {
          healthy: false,
          message: `unexpected answer from ${target.address}: ${JSON.stringify(answer)}`,
        };
      }
      const pong = `pong from ${target.address}`;
      return status === undefined ? { healthy: true, message: pong } : syncListeners(status, pong);
    } catch (error) {
      const hint = target.apiKey === undefined ? ' (no API key found: set SYNCD_API_KEY or SYNCD_HOME)' : '';
      return { healthy: false, message: `${(error as Error).message}${notRecorded(target)}${hint}` };
    }
  } catch (error) {
    return { healthy: false, message: (error as Error).message };
  }
}

/**
 * Whether each TCP listen address listens. Relay and QUIC addresses are not counted: a relay is a
 * connection out to someone else's server, and syncd serves no QUIC (shared/sync-url.ts).
 */
function syncListeners(status: Status, pong: string): { healthy: boolean; message: string } {
  const tcp = Object.entries(status.connectionServiceStatus ?? {}).filter(([address]) =>
    /^tcp[46]?:\/\//i.test(address),
  );
  const down = tcp.filter(([, entry]) => entry.error);
  if (down.length > 0) {
    const named = down.map(([address, { error }]) => `${address} is not listening: ${error}`);
    return { healthy: false, message: `${pong}, but sync listener ${named.join('; ')}` };
  }
  if (tcp.length === 0) return { healthy: true, message: `${pong}; no TCP sync listener is configured` };
  const where = tcp.map(([address, entry]) => entry.lanAddresses[0] ?? address);
  return { healthy: true, message: `${pong}; listening for devices at ${where.join(', ')}` };
}
