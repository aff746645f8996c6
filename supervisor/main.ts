// The supervisor process: `npm start` runs it in the foreground.
import { usage } from '../shared/settings.ts';
import { runSupervisor } from './run-supervisor.ts';
import { EXIT_UNEXPECTED } from './supervisor.ts';

const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  process.stdout.write(`${usage()}\n`);
  process.exit(0);
}

try {
  process.exit(await runSupervisor(argv, process.env));
} catch (error) {
  process.stderr.write(`syncd supervisor: unexpected failure: ${(error as Error).stack ?? error}\n`);
  process.exit(EXIT_UNEXPECTED);
}
