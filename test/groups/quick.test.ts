// The process-level files that spend their time working, not waiting (test/helpers/in-process.ts's
// 'quick' group): the fuzzer, the REST API's processes, the index's, a hostile peer's attacks.
import { runGroup } from '../helpers/in-process.ts';

await runGroup('quick');
