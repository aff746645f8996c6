// The browser tests (test/helpers/in-process.ts's 'browser' group): syncd's own web GUI and
// Syncthing's, each in real Chromium with real peers, in one process.
import { runGroup } from '../helpers/in-process.ts';

await runGroup('browser');
