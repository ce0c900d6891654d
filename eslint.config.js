import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';

// Dependencies point one way: kernels -> workers -> app. Lint enforces it.
export default tseslint.config(
  { ignores: ['dist', 'node_modules', 'test-results', 'playwright-report', 'bench-out', '.gl', '.gpu'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2022, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/kernels/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['react', 'react-dom', 'zustand', 'monaco-editor', 'recharts', 'idb'],
              message: 'src/kernels is pure: no UI or persistence imports.',
            },
            {
              group: ['**/app/**', '**/workers/**'],
              message: 'kernels -> workers -> app: kernels import neither.',
            },
            {
              group: ['node:*', 'fs', 'fs/*', 'path', 'os', 'zlib', 'crypto', 'child_process'],
              message: 'src/kernels runs in the browser too: Node APIs belong in cli/ or test/.',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'navigator', message: 'kernels take a GPUDevice; they never reach for navigator.gpu.' },
        'document',
        'window',
      ],
    },
  },
  {
    files: ['src/workers/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/app/**', 'react', 'react-dom', 'zustand'],
              message: 'workers do not import the app.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/app/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'zustand', message: 'Import the store from src/app/store only.' },
            { name: 'idb', message: 'IndexedDB lives in src/app/persistence only.' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/app/store/**/*.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    files: ['src/app/persistence/**/*.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
);
