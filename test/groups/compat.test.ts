// The process-level test files of the 'compat' group (test/helpers/in-process.ts), in one process.
import { runGroup } from '../helpers/in-process.ts';

await runGroup('compat');
