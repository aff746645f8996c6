// ESLint and Prettier's check as tests, run by tap beside the others (see typecheck.test.ts).
import { execa } from 'execa';
import t from 'tap';
import { packageRoot } from '../../shared/paths.ts';

// The project's own installed tools (node_modules/.bin), run in its folder.
const local = { cwd: packageRoot, preferLocal: true, reject: false } as const;

t.test('ESLint finds nothing, not even a warning', async (t) => {
  const result = await execa('eslint', ['--max-warnings', '0', '.'], local);
  t.equal(result.exitCode, 0, [result.stdout, result.stderr].join('\n').trim() || 'eslint failed');
});

t.test('every file is formatted as Prettier formats it', async (t) => {
  const result = await execa('prettier', ['--check', '.'], local);
  t.equal(result.exitCode, 0, [result.stdout, result.stderr].join('\n').trim() || 'prettier failed');
});
