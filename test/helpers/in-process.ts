// Runs many test files in one process. Each file tap runs costs about 1.5 CPU-seconds before its first
// test (tap's and tsx's start), which on a 2-core machine was a quarter of `npm test`; most files
// therefore run a group at a time, each group in one process (test/groups/). Those that spend their
// time waiting (on timeouts, on Syncthing, on many processes: the files directly in test/process/) and
// the checks keep a process each, run side by side, so that their waits overlap.
// A file still runs alone as `npx tap <file>`. Files share the process: none may leave a handle or a
// changed environment behind (see time-zone.ts), nor add a hook to the root test but teardown-first's,
// which is meant for every test. test/test-files.test.ts checks that each file runs once.
import { readdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { packageRoot } from '../../shared/paths.ts';

const testRoot = join(packageRoot, 'test');

/**
 * The folders whose own files tap runs one per process (its `include`), and those without tests; their
 * subfolders belong to the groups that name them.
 */
const OWN_PROCESS = ['process', 'checks', 'groups', 'helpers', 'fixtures'];

/** Which folders each group runs; a file belongs to the group that names the folder nearest to it. */
export const GROUPS: Record<string, string[]> = {
  sync: ['worker/sync', 'worker/folders'],
  serving: ['worker/http', 'worker/devices', 'worker/bep'],
  engine: ['worker'],
  compat: ['process/compat'],
  service: ['process/service'],
  package: ['process/package'],
  browser: ['process/browser'],
  quick: ['process/quick'],
  rest: [''],
};

/** The test files of test/, relative to it, sorted. */
export async function testFiles(): Promise<string[]> {
  const entries = await readdir(testRoot, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.test.ts'))
    .map((entry) => relative(testRoot, join(entry.parentPath, entry.name)))
    .sort();
}

const within = (file: string, folder: string) => folder === '' || file.startsWith(`${folder}/`);

/** The group that runs `file`, or undefined when tap runs it in a process of its own. */
function groupOf(file: string): string | undefined {
  if (OWN_PROCESS.includes(dirname(file))) return undefined;
  let nearest: { group: string; folder: string } | undefined;
  for (const [group, folders] of Object.entries(GROUPS))
    for (const folder of folders)
      if (within(file, folder) && folder.length >= (nearest?.folder.length ?? 0)) nearest = { group, folder };
  return nearest?.group;
}

/** The files of group `name`, sorted. */
export async function groupFiles(name: string): Promise<string[]> {
  if (!(name in GROUPS)) throw new Error(`no test group named ${name}`);
  return (await testFiles()).filter((file) => groupOf(file) === name);
}

/**
 * Loads every file of group `name`: their tests join this process's root test, in file order. The
 * group has the time tap gives a file (its `timeout`, in seconds) for each of its files.
 */
export async function runGroup(name: string): Promise<void> {
  const files = await groupFiles(name);
  t.setTimeout(Number(process.env.TAP_TIMEOUT ?? 30) * 1000 * files.length);
  for (const file of files) await import(pathToFileURL(join(testRoot, file)).href);
}
