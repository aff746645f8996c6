import { SyncdClient } from './client.ts';
import { notRecorded, resolveTarget } from './target.ts';

export const HEALTH_TIMEOUT_MS = 2000;

/** Pings the service found through the flags given, the environment or the home; never throws. */
export async function checkHealth(
  env: NodeJS.ProcessEnv,
  given: { address?: string; apiKey?: string; home?: string; tls?: boolean } = {},
): Promise<{ healthy: boolean; message: string }> {
  try {
    const target = await resolveTarget(given, env);
    const client = new SyncdClient({
      address: target.url,
      ca: target.ca,
      apiKey: target.apiKey,
      timeoutMs: HEALTH_TIMEOUT_MS,
    });
    try {
      const answer = await client.ping();
      if (answer?.ping === 'pong') return { healthy: true, message: `pong from ${target.address}` };
      return {
        healthy: false,
        message: `unexpected answer from ${target.address}: ${JSON.stringify(answer)}`,
      };
    } catch (error) {
      const hint = target.apiKey === undefined ? ' (no API key found: set SYNCD_API_KEY or SYNCD_HOME)' : '';
      return { healthy: false, message: `${(error as Error).message}${notRecorded(target)}${hint}` };
    }
  } catch (error) {
    return { healthy: false, message: (error as Error).message };
  }
}
