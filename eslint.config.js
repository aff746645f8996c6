// Lint rules: ESLint's and typescript-eslint's recommended sets; formatting is Prettier's job.
import js from '@eslint/js';
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
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
);
