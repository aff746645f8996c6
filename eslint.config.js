// Lint rules: ESLint's and typescript-eslint's recommended sets; formatting is oxfmt's job. The
// service's own code is also linted with its types, for promises nobody waits for: one that rejects
// unheard is an unhandled rejection, which ends a worker.
import js from '@eslint/js';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      '.tap/',
      'coverage/',
      'dist/',
      'scratch/',
      '**/*_pb.ts',
      'scripts/bench/limits/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // dependency-cruiser reads its configuration as CommonJS.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Tests are left out: tap awaits the t.test calls left floating at their top level.
    files: ['worker/**/*.ts', 'shared/**/*.ts', 'supervisor/**/*.ts', 'scripts/**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: dirname(fileURLToPath(import.meta.url)) },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // A promise given where nothing waits for it (a callback whose result is ignored) is allowed
      // when the function handles its own rejections; the rule above catches the rest.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
    },
  },
);
