// Runs many test files in one process. Each file tap runs costs about 1.5 CPU-seconds before its first
// test (tap's and tsx's start), which on a 2-core machine was a quarter of `npm test`; the files that
// test in-process therefore run a group at a time, each group in one process (test/groups/), while
// those that wait on processes (test/process/, test/checks/) keep a process each, run side by side.
// A file still runs alone as `npx tap <file>`. Files share the process: none may leave a handle or a
// changed environment behind (see time-zone.ts), nor add a hook to the root test but teardown-first's,
// which is meant for every test. test/test-files.test.ts checks that each file runs once.
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../../shared/paths.ts';

const testRoot = join(packageRoot, 'test');

/** The folders of test/ whose files tap runs one per process (its `include`), and those without tests. */
const OWN_PROCESS = ['process', 'checks', 'groups', 'helpers', 'fixtures'];

/** Which folders each group runs; `rest` runs every test file no other group or process claims. */
export const GROUPS: Record<string, string[]> = {
  sync: ['worker/sync', 'worker/folders'],
  serving: ['worker/http', 'worker/devices', 'worker/bep'],
  engine: ['worker'],
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

/**
 * The files of group `name`: those below its folders, less those of OWN_PROCESS and of the groups
 * listed before it (a file belongs to the first group whose folder holds it).
 */
export async function groupFiles(name: string): Promise<string[]> {
  const order = Object.keys(GROUPS);
  if (!order.includes(name)) throw new Error(`no test group named ${name}`);
  const earlier = order.slice(0, order.indexOf(name)).flatMap((group) => GROUPS[group] ?? []);
  return (await testFiles()).filter(
    (file) =>
      !OWN_PROCESS.some((folder) => within(file, folder)) &&
      !earlier.some((folder) => within(file, folder)) &&
      (GROUPS[name] ?? []).some((folder) => within(file, folder)),
  );
}

/** Loads every file of group `name`: their tests join this process's root test, in file order. */
export async function runGroup(name: string): Promise<void> {
  for (const file of await groupFiles(name)) await import(pathToFileURL(join(testRoot, file)).href);
}
