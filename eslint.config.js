import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';

// Dependencies point one way: kernels -> workers -> app. Lint enforces it.

const ZUSTAND_ONLY_IN_STORE = { name: 'zustand', message: 'Import the store from src/app/store only.' };
const IDB_ONLY_IN_PERSISTENCE = { name: 'idb', message: 'IndexedDB lives in src/app/persistence only.' };

// The app's main thread stays light: at run time it imports only the families' catalogs and the light
// modules they are made of (declarations, validation, tile and adapter rules, model presets, the escaping
// of text from files); the generators, oracles and quant code load in the GPU worker. Type imports are fine from anywhere
// (they vanish from the bundle); e2e/bundle.spec.ts checks the built main chunk as well.
const LIGHT_MAIN_THREAD = [
  {
    regex:
      '^(\\.{1,2}/)+([^/]+/)*kernels(?!/(catalog|registry|family|controls|tile|work|compare|partials|arms|gpu/caps|models/presets|tensors|models/forward|models/modelRun|quant/untrustedText|tune/problem|tune/finals|tune/pick|tune/knobs|perf/(?:roofline|spread|traffic|ktCache|probe|estimate)|[\\w-]+/catalog)$)(/.*)?$',
    allowTypeImports: true,
    message:
      'The main thread imports only the light kernel catalogs (kernels/catalog.ts and its modules); generators, oracles and quant code load in the worker. `import type` is fine.',
  },
  {
    regex: '^(\\.{1,2}/)+([^/]+/)*workers(?!/protocol$)(/.*)?$',
    allowTypeImports: true,
    message: 'The app talks to the worker through the protocol (src/workers/protocol.ts) only.',
  },
];

// A test file runs inside a vitest worker (or Playwright's): a blocking child process there starves the
// worker's RPC, and under load the runner gives up on it mid-suite. Tests spawn through test/cliProcess.ts.
const BLOCKING_CHILD = '^(spawnSync|execSync|execFileSync)$';
const NO_BLOCKING_CHILD_PROCESS = [
  'error',
  {
    selector: `ImportDeclaration[source.value=/^(node:)?child_process$/] ImportSpecifier[imported.name=/${BLOCKING_CHILD}/]`,
    message: 'No blocking child processes in tests: use runProcess / runMmq from test/cliProcess.ts.',
  },
  {
    selector: `MemberExpression[property.name=/${BLOCKING_CHILD}/], ObjectPattern > Property[key.name=/${BLOCKING_CHILD}/]`,
    message: 'No blocking child processes in tests: use runProcess / runMmq from test/cliProcess.ts.',
  },
];

// A focused or skipped test leaves the others unrun while the run still passes: .ci/run sets CI=true (vitest
// and Playwright then refuse .only) and .ci/verdict.ts fails any skip .ci/skips.ts does not declare; this
// says so where the code is written. A test skips through skipBecause (test/skip.ts), with its reason.
const NO_FOCUS_OR_SKIP = [
  {
    selector:
      "MemberExpression[object.name=/^(it|test|describe|suite|bench)$/][property.name='only'], MemberExpression[object.property.name=/^(describe|step)$/][property.name='only']",
    message: '.only leaves the other tests unrun: remove it before committing (CI=true fails it anyway).',
  },
  {
    selector:
      'MemberExpression[object.name=/^(it|test|describe|suite)$/][property.name=/^(skip|skipIf|runIf|todo|fixme)$/]',
    message:
      'CI fails undeclared skips: skip inside the test with skipBecause(ctx, reason, detail) from test/skip.ts, with a reason .ci/skips.ts declares.',
  },
];

export default tseslint.config(
  {
    ignores: [
      'dist',
      'dist-e2e',
      'node_modules',
      'test-results',
      'playwright-report',
      'bench-out',
      '.gl',
      '.gpu',
      'reports',
      '.stryker-tmp',
    ],
  },
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
            {
              // A family folder is private to itself: the shared folders (gpu, quant, tune, models, perf) and
              // the other families reach it through its public entry (index.ts) or its light catalog.ts only.
              regex: '^\\.\\./(?!(gpu|quant|tune|models|perf)/)[\\w-]+/(?!catalog$)[\\w.-]+$',
              message:
                "Another family's folder is private: import its public entry ('../family') or its light '../family/catalog'.",
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
    // The bench measures kernels through src/kernels (families, the runner, the problem sessions); the
    // worker is the app's process, not a library the bench builds on.
    files: ['bench/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/src/workers', '**/src/workers/**', '**/app/**'],
              message: 'bench/ imports src/kernels only (problem sessions: src/kernels/tune/session.ts).',
            },
          ],
        },
      ],
    },
  },
  {
    // The CLI runs the worker core in its own process; the app (React, its store) is not a library.
    files: ['cli/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/src/app', '**/src/app/**'],
              message: 'cli/ imports src/kernels and src/workers, never src/app.',
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
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { paths: [ZUSTAND_ONLY_IN_STORE, IDB_ONLY_IN_PERSISTENCE], patterns: LIGHT_MAIN_THREAD },
      ],
    },
  },
  {
    files: ['src/app/store/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { paths: [IDB_ONLY_IN_PERSISTENCE], patterns: LIGHT_MAIN_THREAD },
      ],
    },
  },
  {
    files: ['src/app/persistence/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { paths: [ZUSTAND_ONLY_IN_STORE], patterns: LIGHT_MAIN_THREAD },
      ],
    },
  },
  {
    // Tests and their fixtures run in Node: they may import the full registry and the GPU helpers.
    files: ['src/app/**/*.test.ts', 'src/app/**/*.fixture.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': 'off' },
  },
  {
    files: ['test/**/*.ts', 'e2e/**/*.ts', 'src/**/*.test.{ts,tsx}'],
    rules: { 'no-restricted-syntax': [...NO_BLOCKING_CHILD_PROCESS, ...NO_FOCUS_OR_SKIP] },
  },
  {
    // `npm run test:gpu` is a standalone command, never loaded by vitest: reading the commit with git blocks
    // nothing but itself.
    files: ['test/hw/main.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
);
