// The in-process test files of the 'serving' group (test/helpers/in-process.ts), in one process.
import { runGroup } from '../helpers/in-process.ts';

await runGroup('serving');
