// The compiler's check, ESLint and the formatter's check as tests, run by tap beside the others (they wait
// on nothing; the others often wait on processes). The compiler's program is built once and given to
// ESLint for its typed rules: `npm run typecheck` and `npm run lint` each build their own, which on a
// 2-core machine cost 25 CPU-seconds more than this file.
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { execa } from 'execa';
import t from 'tap';
import ts from 'typescript';
import { packageRoot } from '../../shared/paths.ts';

// The formatter (oxfmt, .oxfmtrc.jsonc) in a process of its own, the project's installed one, meanwhile.
const formatter = execa('oxfmt', ['--check'], { cwd: packageRoot, preferLocal: true, reject: false });

function tsconfig(): ts.ParsedCommandLine {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(packageRoot, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (!parsed) throw new Error('tsconfig.json could not be read');
  return parsed;
}

const config = tsconfig();
const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });

t.test('the TypeScript compiler finds no error (tsc --noEmit)', async (t) => {
  const diagnostics = [...config.errors, ...ts.getPreEmitDiagnostics(program)];
  const text = ts.formatDiagnostics(diagnostics, {
    getCanonicalFileName: (name) => name,
    getCurrentDirectory: () => packageRoot,
    getNewLine: () => '\n',
  });
  t.equal(diagnostics.length, 0, text.trim() || 'tsc failed');
});

t.test('ESLint finds nothing, not even a warning', async (t) => {
  // eslint.config.js's typed rules read types from the compiler's program above, not a project
  // service of their own.
  const eslint = new ESLint({
    cwd: packageRoot,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parserOptions: { programs: [program], projectService: false } },
      },
    ],
  });
  const results = await eslint.lintFiles(['.']);
  const problems = results.reduce((sum, result) => sum + result.errorCount + result.warningCount, 0);
  const text = await (await eslint.loadFormatter('stylish')).format(results);
  t.equal(problems, 0, String(text).trim() || 'eslint failed');
});

t.test('every file is formatted as the formatter formats it (npm run format)', async (t) => {
  const result = await formatter;
  t.equal(result.exitCode, 0, [result.stdout, result.stderr].join('\n').trim() || 'oxfmt failed');
});
