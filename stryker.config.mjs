// StrykerJS over the modules whose logic Node tests can reach (npm run mutate; README "Tests"). It mutates
// the code, runs the tests that covered each mutant (vitest.stryker.config.ts: the unit tier less the
// Dawn GPU files), and reports the mutants no test killed. The WGSL generators (*.wgsl.ts) are left out:
// their mutants are edits of shader text that only a GPU run can judge, and here they would only show as
// survivors; test/mutants.test.ts keeps hand-written WGSL mutants for those. Files that mix plan logic with
// WGSL (coopmat split/stream, the prepass, the probe, moe.f16) stay in, their template text with them.
//
// Incremental: the results of the last run are kept in reports/mutation/incremental.json (git-ignored),
// and a mutant whose code and covering tests did not change is not run again. The file is not committed:
// it records every mutant of every area (megabytes that change on each run and would conflict between
// branches), and CI's smoke mutates only the lines a commit changed.
import process from 'node:process';

// Tests that run the CLI in-process open Dawn; on SwiftShader where no other Vulkan driver is named (as
// test/gpu.ts and CI do). The test runners Stryker starts inherit it.
process.env.VK_ICD_FILENAMES ??= '/usr/lib/chromium/vk_swiftshader_icd.json';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.stryker.config.ts', related: true },
  // The TypeScript checker drops a mutant that does not type-check (CompileError) instead of running it,
  // but type-checks the project for each mutant: on two cores that cost over twenty times the mutants'
  // own test runs. So it is off by default (such a mutant then runs, and almost always fails its tests)
  // and on for a precise run: `npm run mutate -- --checkers typescript`.
  checkers: [],
  tsconfigFile: 'tsconfig.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  coverageAnalysis: 'perTest',
  mutate: [
    // src/kernels: quant, perf, tune, models, the GPU plan and timing logic, each family's plan, params
    // and oracle, and the shared catalog logic.
    'src/kernels/quant/**/*.ts',
    'src/kernels/perf/**/*.ts',
    'src/kernels/tune/**/*.ts',
    'src/kernels/models/**/*.ts',
    'src/kernels/gpu/{timing,plan,gridSlice,bindings,caps,instrument,prepass}.ts',
    'src/kernels/*/*.{plan,oracle,params,family,data,split,stream,emit,operands,f16}.ts',
    'src/kernels/*/catalog.ts',
    'src/kernels/{compare,partials,tile,work,controls,registry,define,memo,oracle,cancel,arms,space,tensors}.ts',
    // src/app logic (no .tsx): the store, the controllers, permalinks, the perf and analysis views' logic.
    'src/app/store/*.ts',
    'src/app/*Controller.ts',
    'src/app/controller.ts',
    'src/app/permalink/*.ts',
    'src/app/perf/{perfView,sweepPerf}.ts',
    'src/app/views/{analysis,abCompare,gridDraw}.ts',
    'src/app/model/tensorFilter.ts',
    'src/app/tuner/tunerData.ts',
    // src/workers: the core, the run path, the tune handler, the model reader.
    'src/workers/{core,run,models}.ts',
    'src/workers/tune/handler.ts',
    'cli/*.ts',
    '!**/*.test.ts',
    '!**/*.fixture.ts',
    '!**/*.wgsl.ts',
    '!**/index.ts',
  ],
  ignoreStatic: true,
  incremental: true,
  incrementalFile: 'reports/mutation/incremental.json',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  // CI's smoke (.ci/mutationSmoke.ts) writes its report elsewhere, leaving a developer's full one alone.
  jsonReporter: { fileName: process.env.MMQ_MUTATION_JSON ?? 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  // A mutant that makes a test loop runs into this (a multiple of the test's own time), then counts as
  // killed by timeout.
  timeoutMS: 10_000,
  timeoutFactor: 2,
  tempDirName: '.stryker-tmp',
  // Build and test outputs no test reads: not copied into Stryker's sandbox.
  ignorePatterns: [
    'dist',
    'dist-e2e',
    'test-results',
    'playwright-report',
    'bench-out',
    '.test-results',
    'bench/.ort',
  ],
  cleanTempDir: 'always',
  thresholds: { high: 80, low: 60, break: null },
};
