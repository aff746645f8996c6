// Health check for containers and probes: exits 0 when the service answers pong within 2 s, else 1.
// With --sync (or SYNCD_HEALTHCHECK_SYNC=1), also 1 when a TCP sync listener is not listening.
// Runs as `node dist/scripts/healthcheck.js` (no curl needed) or `npm run healthcheck`; finds the
// address and key in SYNCD_ADDRESS / SYNCD_API_KEY, else in the home (SYNCD_HOME).
import { checkHealth, HEALTH_TIMEOUT_MS } from '../shared/client/health.ts';

// A hard stop as well, in case anything outlasts the request's own timeout.
setTimeout(() => {
  process.stderr.write(`unhealthy: no answer within ${HEALTH_TIMEOUT_MS}ms\n`);
  process.exit(1);
}, HEALTH_TIMEOUT_MS + 250).unref();

const args = process.argv.slice(2);
const unknown = args.filter((arg) => arg !== '--sync');
if (unknown.length > 0) {
  process.stderr.write(`unhealthy: unknown argument ${unknown.join(' ')} (only --sync)\n`);
  process.exit(1);
}
const { healthy, message } = await checkHealth(process.env, args.includes('--sync') ? { sync: true } : {});
(healthy ? process.stdout : process.stderr).write(`${healthy ? 'healthy' : 'unhealthy'}: ${message}\n`);
process.exit(healthy ? 0 : 1);
