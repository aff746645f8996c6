// The worker's HTTP app listening on its own socket, without the supervisor's handoff: the benchmark
// compares it with syncd to show what handing connections over costs.
import { createLogger } from '../../shared/logger.ts';
import { buildApp } from '../../worker/http/app.ts';
import { RecentErrors } from '../../shared/recent-errors.ts';
import { localErrors } from '../../worker/http/routes/system.ts';

const [port, apiKey] = [Number(process.argv[2]), process.argv[3] ?? ''];
const errors = new RecentErrors();
const app = buildApp({
  apiKey,
  logger: createLogger('worker', 'warn', (error, slot) => errors.add(error, slot)),
  errors: localErrors(errors),
  status: {
    startTime: new Date(),
    address: `127.0.0.1:${port}`,
    supervisor: () => ({ pid: 0, startTime: '', restarts: 0, crashes: 0 }),
  },
  onAction: () => {},
  isDraining: () => false,
});
await app.listen({ port, host: '127.0.0.1' });
