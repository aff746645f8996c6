// The compiler's check, the linter and the formatter's check as tests, run by tap beside the others
// (they wait on nothing; the others often wait on processes). All three are native programs, started
// at once: TypeScript's native compiler (tsgo) checks in about 6 CPU-seconds where tsc took 24, and
// oxlint lints, with types for the promise rules, in 4 where ESLint took 14 more; on a 2-core machine
// that was a tenth of the run.
import { execa } from 'execa';
import t, { type Test } from 'tap';
import { packageRoot } from '../../shared/paths.ts';

const run = (command: string, args: string[]) =>
  execa(command, args, { cwd: packageRoot, preferLocal: true, reject: false, all: true });

/** Passes when the check exited 0; otherwise fails with what it printed. */
async function passes(t: Test, check: ReturnType<typeof run>, name: string): Promise<void> {
  const result = await check;
  t.equal(
    result.exitCode,
    0,
    result.exitCode === 0 ? `${name}: nothing found` : result.all?.trim() || `${name} failed`,
  );
}

const compiler = run('tsgo', ['--noEmit', '-p', 'tsconfig.json']);
// The web GUI is a browser's program: its own settings (the DOM's types, JSX), checked apart.
const guiCompiler = run('tsgo', ['--noEmit', '-p', 'gui/tsconfig.json']);
const linter = run('oxlint', ['--max-warnings', '0', '.']);
const formatter = run('oxfmt', ['--check']);

t.test('the TypeScript compiler finds no error (npm run typecheck)', async (t) => {
  await passes(t, compiler, 'tsgo --noEmit');
  await passes(t, guiCompiler, 'tsgo --noEmit -p gui');
});

t.test('the linter finds nothing, not even a warning (npm run lint)', async (t) => {
  await passes(t, linter, 'oxlint');
});

t.test('every file is formatted as the formatter formats it (npm run format)', async (t) => {
  await passes(t, formatter, 'oxfmt --check');
});
