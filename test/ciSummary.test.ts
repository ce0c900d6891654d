// CI's verdict (.ci/verdict.ts): a pass needs every tier's exit code 0 AND reports that account for every
// test file the runners were given. A runner that died mid-suite once left `success: true` over the 10
// files it finished, with 42 never run; that, a non-zero runner with every test passing, and a missing or
// cut-short report must all read FAIL. So must the runs that pass without running (issue 44): skips the
// product decided, a .only, a snapshot written or left obsolete, a screenshot with no baseline, and a file
// stopped at its wall-clock limit. The reports fed here have the shape vitest 3.2 and Playwright 1.65 write.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  areaOf,
  changedRanges,
  globRegExp,
  mutatedOf,
  mutateSpecs,
  readStrykerSettings,
  scoreByArea,
  scoreTable,
  survivors,
  type Mutant,
  type MutationReport,
} from '../.ci/mutation';
import { EXPECTED_SKIPS } from '../.ci/skips';
import {
  ciVerdict,
  isPlaywrightReport,
  isVitestReport,
  listTestFiles,
  parseExits,
  parseSmoke,
  parseStopped,
  readReport,
  snapshotOwner,
  type CiInputs,
  type PlaywrightReport,
  type PlaywrightSuite,
  type VitestReport,
  type VitestSnapshots,
} from '../.ci/verdict';
import { ROOT, runProcess } from './cliProcess';
import { skipBecause } from './skip';

const root = '/repo';
const unitFiles = ['src/a.test.ts', 'test/b.test.ts', 'test/c.test.ts'];
const e2eFiles = ['e2e/app.spec.ts', 'e2e/model.spec.ts'];

/** Vitest's snapshot summary of a run that wrote, overwrote and left nothing obsolete. */
const CLEAN_SNAPSHOTS: VitestSnapshots = {
  added: 0,
  filesAdded: 0,
  updated: 0,
  unchecked: 0,
  uncheckedKeysByFile: [],
  filesRemoved: 0,
  filesRemovedList: [],
};

/** A vitest test: its status, and its full name and the skip reason test/skip.ts recorded, if given. */
type UnitTest = string | { status: string; fullName: string; skipReason?: string };

/** A vitest report: `tests` per file, each 'passed' unless given another status. */
function vitest(files: Record<string, UnitTest[]>, over: Partial<VitestReport> = {}): VitestReport {
  const testResults = Object.entries(files).map(([name, tests]) => ({
    name: `${root}/${name}`,
    status: tests.some((t) => (typeof t === 'string' ? t : t.status) === 'failed') ? 'failed' : 'passed',
    assertionResults: tests.map((t, i) =>
      typeof t === 'string'
        ? { status: t, fullName: `${name} #${i}`, meta: {} }
        : { status: t.status, fullName: t.fullName, meta: t.skipReason ? { skipReason: t.skipReason } : {} },
    ),
  }));
  const all = testResults.flatMap((f) => f.assertionResults.map((t) => t.status));
  return {
    success: !all.includes('failed'),
    numTotalTests: all.length,
    numPassedTests: all.filter((s) => s === 'passed').length,
    numFailedTests: all.filter((s) => s === 'failed').length,
    snapshot: CLEAN_SNAPSHOTS,
    testResults,
    ...over,
  };
}

/** A Playwright report: one top-level suite per spec file; a test's status and its results' statuses. */
function playwright(files: Record<string, [status: string, results: string[]][]>): PlaywrightReport {
  const suites: PlaywrightSuite[] = Object.entries(files).map(([file, tests]) => ({
    title: file,
    file,
    specs: tests.map(([status, results], i) => ({
      title: `test ${i}`,
      tests: [{ status, results: results.map((s) => ({ status: s })) }],
    })),
  }));
  const all = Object.values(files).flat();
  const n = (s: string) => all.filter(([status]) => status === s).length;
  return {
    config: { rootDir: `${root}/e2e`, forbidOnly: true, updateSnapshots: 'none' },
    stats: { expected: n('expected'), unexpected: n('unexpected'), flaky: n('flaky'), skipped: n('skipped') },
    suites,
  };
}

/** A mutant of Stryker's JSON report at `line` with `status`. */
const mutant = (status: string, line = 1, replacement = 'false'): Mutant => ({
  mutatorName: 'ConditionalExpression',
  status,
  replacement,
  location: { start: { line, column: 5 } },
});

/** The smoke's report: 8 killed, a timeout and a survivor in one file. */
const smokeReport: MutationReport = {
  files: {
    'src/kernels/tune/rounds.ts': {
      mutants: [
        ...Array.from({ length: 8 }, (_, i) => mutant('Killed', i + 1)),
        mutant('Timeout', 9),
        mutant('Survived', 12),
      ],
    },
  },
};

const green: CiInputs = {
  exits: new Map([
    ['check', 0],
    ['unit', 0],
    ['build', 0],
    ['e2e', 0],
    ['mutate', 0],
  ]),
  root,
  unitFiles,
  e2eFiles,
  unit: {
    report: vitest({
      'src/a.test.ts': ['passed', 'passed'],
      'test/b.test.ts': ['passed'],
      'test/c.test.ts': ['passed'],
    }),
  },
  e2e: {
    report: playwright({
      'app.spec.ts': [['expected', ['passed']]],
      'model.spec.ts': [
        ['expected', ['passed']],
        ['flaky', ['failed', 'passed']],
      ],
    }),
  },
  snapshotFiles: ['src/__snapshots__/a.test.ts.snap', 'e2e/app.spec.ts-snapshots/app.png'],
  untrackedSnapshots: [],
  stopped: [],
  mutation: { report: smokeReport },
  smoke: {
    why: 'no product file changed by 1a2b3c4: the default module',
    files: ['src/kernels/tune/rounds.ts'],
  },
  breakAt: null,
};

const failLines = (inputs: CiInputs) => ciVerdict(inputs).lines.filter((l) => l.startsWith('FAIL: '));

describe('CI verdict', () => {
  it('every tier 0, every file and test accounted for: PASS, with its own counts', () => {
    const v = ciVerdict(green);
    expect(v.pass).toBe(true);
    expect(v.lines).toEqual([
      'tiers: check 0, unit 0, build 0, e2e 0, mutate 0',
      'unit: 4 passed, 0 failed, 0 skipped, in 3 of 3 files',
      'e2e: 3 passed, 0 failed, 0 skipped, in 2 of 2 files',
      'mutate: 90.0% of 10 mutants killed in src/kernels/tune/rounds.ts (no product file changed by 1a2b3c4: the default module): 8 killed, 1 timed out, 1 survived, 0 run by no test; break threshold none yet',
      'mutate: not killed: src/kernels/tune/rounds.ts:12:5 ConditionalExpression -> false',
      'CI: PASS',
    ]);
  });

  it('a runner that exited non-zero with every test passing: FAIL', () => {
    const v = ciVerdict({ ...green, exits: new Map([...green.exits, ['unit', 1]]) });
    expect(v.pass).toBe(false);
    expect(failLines({ ...green, exits: new Map([...green.exits, ['unit', 1]]) })).toEqual([
      'FAIL: unit: exited 1',
    ]);
    expect(v.lines.at(-1)).toBe('CI: FAIL (1 problem)');
    const noE2e = new Map(green.exits);
    noE2e.delete('e2e');
    expect(failLines({ ...green, exits: noE2e })).toEqual([
      'FAIL: e2e: no exit code recorded (the tier did not finish)',
    ]);
  });

  it('a report that says success: true over the files it finished, with the others never run: FAIL', () => {
    const cut = vitest({ 'src/a.test.ts': ['passed', 'passed'] });
    expect(cut.success).toBe(true);
    expect(failLines({ ...green, unit: { report: cut } })).toEqual([
      'FAIL: unit: 2 of 3 test files never reported: test/b.test.ts, test/c.test.ts',
    ]);
    // Collected but never finished (vitest marks them pending) or collected empty: FAIL too.
    const pending = vitest({
      'src/a.test.ts': ['passed'],
      'test/b.test.ts': ['pending', 'pending'],
      'test/c.test.ts': [],
    });
    expect(failLines({ ...green, unit: { report: pending } })).toEqual([
      'FAIL: unit: 1 files reported no tests: test/c.test.ts',
      'FAIL: unit: 2 tests never finished: test/b.test.ts #0, test/b.test.ts #1',
    ]);
    // Playwright: a spec file missing, and a test interrupted or never started.
    const e2e = playwright({
      'app.spec.ts': [
        ['expected', ['passed']],
        ['skipped', ['interrupted']],
        ['skipped', []],
      ],
    });
    expect(failLines({ ...green, e2e: { report: e2e } })).toEqual([
      'FAIL: e2e: 2 tests never ran: test 1, test 2',
      'FAIL: e2e: 1 of 2 test files never reported: e2e/model.spec.ts',
    ]);
  });

  it('a test skipped on purpose is not one that never ran, but no e2e skip is declared', () => {
    const e2e = playwright({ 'app.spec.ts': [['expected', ['passed']]], 'model.spec.ts': [['skipped', []]] });
    e2e.suites[1]!.specs[0]!.tests[0]!.annotations = [{ type: 'skip', description: 'no-subgroup-matrix' }];
    expect(failLines({ ...green, e2e: { report: e2e } })).toEqual([
      'FAIL: e2e: 1 tests skipped for a reason .ci/skips.ts does not allow them: e2e/model.spec.ts: test 0 (no-subgroup-matrix)',
    ]);
  });

  it('failed tests, and totals that disagree with the tests listed: FAIL', () => {
    const failed = vitest({
      ...Object.fromEntries(unitFiles.map((f) => [f, ['passed']])),
      'test/c.test.ts': ['failed'],
    });
    expect(failLines({ ...green, unit: { report: failed } })).toEqual([
      'FAIL: unit: 1 tests failed, in 1 files: test/c.test.ts',
      'FAIL: unit: vitest reported success: false',
    ]);
    const padded = vitest(Object.fromEntries(unitFiles.map((f) => [f, ['passed']])), { numPassedTests: 52 });
    expect(failLines({ ...green, unit: { report: padded } })).toEqual([
      "FAIL: unit: the report's totals (52 of 3 passed) disagree with its tests (3 of 3)",
    ]);
  });

  it('a missing report, an unreadable one, or none at all: FAIL', () => {
    expect(failLines({ ...green, unit: { problem: 'x.json is missing' } })).toEqual([
      'FAIL: unit: x.json is missing',
    ]);
    const v = ciVerdict({ ...green, exits: new Map(), unit: { problem: 'a' }, e2e: { problem: 'b' } });
    expect(v.pass).toBe(false);
    expect(v.lines[0]).toBe(
      'tiers: check did not finish, unit did not finish, build did not finish, e2e did not finish, mutate did not finish',
    );
  });
});

/** The unit report of green with `tests` added to test/b.test.ts. */
const withB = (tests: UnitTest[], over: Partial<VitestReport> = {}): CiInputs => ({
  ...green,
  unit: {
    report: vitest(
      { 'src/a.test.ts': ['passed'], 'test/b.test.ts': ['passed', ...tests], 'test/c.test.ts': ['passed'] },
      over,
    ),
  },
});

/** A test of test/mmq.gpu.test.ts on one arm, as test/kernelHarness.ts names it. */
const armTest = (arm: string, status: string, skipReason?: string): UnitTest => ({
  status,
  fullName: `dense mmq-q8-tiled (mmq_q8_wmma_blk) matches mmqQ8Ref at 32x64x128 (rel_to_max < 1e-6) [${arm}]`,
  ...(skipReason ? { skipReason } : {}),
});

describe('ways to pass without running (issue 44)', () => {
  const gpuFiles = { ...green, unitFiles: [...unitFiles, 'test/mmq.gpu.test.ts'] };
  const gpuRun = (tests: UnitTest[]): CiInputs => ({
    ...gpuFiles,
    unit: {
      report: vitest({
        'src/a.test.ts': ['passed'],
        'test/b.test.ts': ['passed'],
        'test/c.test.ts': ['passed'],
        'test/mmq.gpu.test.ts': tests,
      }),
    },
  });

  it('skips the list declares, each with its reason: PASS, counted by reason', () => {
    const v = ciVerdict(
      gpuRun([
        armTest('scalar', 'passed'),
        armTest('dp4a', 'passed'),
        armTest('subgroup-matrix', 'skipped', 'no-subgroup-matrix'),
      ]),
    );
    expect(v.pass).toBe(true);
    expect(v.lines[1]).toBe(
      'unit: 5 passed, 0 failed, 1 skipped (expected: 1 no-subgroup-matrix), in 4 of 4 files',
    );
  });

  it('the dp4a arm calling itself unavailable: its tests skip with no reason, or the matrix reason: FAIL', () => {
    // Before test/skip.ts, kernelHarness skipped any arm the product called unavailable, with no reason.
    expect(
      failLines(
        gpuRun([
          armTest('scalar', 'passed'),
          armTest('dp4a', 'skipped'),
          armTest('subgroup-matrix', 'skipped'),
        ]),
      ),
    ).toEqual([
      'FAIL: unit: 2 tests skipped without a declared reason (.only, .skip, .todo, or a skip the code decided; .ci/skips.ts lists the allowed ones): ' +
        'test/mmq.gpu.test.ts: dense mmq-q8-tiled (mmq_q8_wmma_blk) matches mmqQ8Ref at 32x64x128 (rel_to_max < 1e-6) [dp4a], ' +
        'test/mmq.gpu.test.ts: dense mmq-q8-tiled (mmq_q8_wmma_blk) matches mmqQ8Ref at 32x64x128 (rel_to_max < 1e-6) [subgroup-matrix]',
    ]);
    // A reason that holds on this adapter, given by a test the list does not allow it for.
    expect(
      failLines(
        gpuRun([
          armTest('scalar', 'passed'),
          armTest('dp4a', 'skipped', 'no-subgroup-matrix'),
          armTest('subgroup-matrix', 'skipped', 'no-onnxruntime'),
        ]),
      ),
    ).toEqual([
      'FAIL: unit: 2 tests skipped for a reason .ci/skips.ts does not allow them: ' +
        'test/mmq.gpu.test.ts: dense mmq-q8-tiled (mmq_q8_wmma_blk) matches mmqQ8Ref at 32x64x128 (rel_to_max < 1e-6) [dp4a] (no-subgroup-matrix), ' +
        'test/mmq.gpu.test.ts: dense mmq-q8-tiled (mmq_q8_wmma_blk) matches mmqQ8Ref at 32x64x128 (rel_to_max < 1e-6) [subgroup-matrix] (no-onnxruntime)',
    ]);
  });

  it('every entry of the list names a file that exists and a reason of its own', () => {
    const { unit } = listTestFiles(ROOT);
    for (const e of EXPECTED_SKIPS) expect(unit, `${e.file} (${e.reason})`).toContain(e.file);
  });

  it(".only by hand (no CI=true): the file's other tests skipped: FAIL; under CI=true vitest fails the file", () => {
    // What vitest 3.2 writes for `it.only('focused')` beside `it('other')`, run without CI=true.
    expect(failLines(withB(['skipped', { status: 'skipped', fullName: 'other' }]))).toEqual([
      'FAIL: unit: 2 tests skipped without a declared reason (.only, .skip, .todo, or a skip the code decided; .ci/skips.ts lists the allowed ones): test/b.test.ts: test/b.test.ts #1, test/b.test.ts: other',
    ]);
    // .todo and a skip with a reason nobody declared read the same.
    expect(failLines(withB(['todo']))[0]).toMatch(/^FAIL: unit: 1 tests skipped without a declared reason/);
    expect(failLines(withB([{ status: 'skipped', fullName: 'x', skipReason: 'flaky' }]))).toEqual([
      'FAIL: unit: 1 tests skipped for a reason .ci/skips.ts does not allow them: test/b.test.ts: x (flaky)',
    ]);
    // Under CI=true (.ci/run sets it) vitest fails the focused test: "Unexpected .only modifier".
    expect(failLines(withB(['failed', 'skipped']))).toEqual([
      'FAIL: unit: 1 tests skipped without a declared reason (.only, .skip, .todo, or a skip the code decided; .ci/skips.ts lists the allowed ones): test/b.test.ts: test/b.test.ts #2',
      'FAIL: unit: 1 tests failed, in 1 files: test/b.test.ts',
      'FAIL: unit: vitest reported success: false',
    ]);
  });

  it('a snapshot written by the run (the .snap was deleted), overwritten, or obsolete: FAIL', () => {
    const snap = (over: Partial<VitestSnapshots>) =>
      failLines(withB([], { snapshot: { ...CLEAN_SNAPSHOTS, ...over } }));
    // vitest without CI=true: "1 written", and the test passes.
    expect(snap({ added: 1, filesAdded: 1 })).toEqual([
      'FAIL: unit: 1 snapshots written by the run (1 new files): a missing snapshot is written, not compared; run with CI=true and commit the .snap',
    ]);
    expect(snap({ updated: 2 })).toEqual(['FAIL: unit: 2 snapshots overwritten by the run (vitest -u)']);
    // A stored snapshot no test checks any more: vitest says "1 obsolete" and exits 0.
    expect(
      snap({ unchecked: 1, uncheckedKeysByFile: [{ filePath: `${root}/test/b.test.ts`, keys: ['gone 1'] }] }),
    ).toEqual(['FAIL: unit: 1 obsolete snapshots (stored, checked by no test): test/b.test.ts: gone 1']);
    expect(
      snap({ filesRemoved: 1, filesRemovedList: [`${root}/test/__snapshots__/gone.test.ts.snap`] }),
    ).toEqual(['FAIL: unit: 1 obsolete snapshot files: test/__snapshots__/gone.test.ts.snap']);
  });

  it('snapshot files of no test file, or not committed: FAIL', () => {
    expect(
      failLines({
        ...green,
        snapshotFiles: [
          ...green.snapshotFiles,
          'test/__snapshots__/gone.test.ts.snap',
          'e2e/gone.spec.ts-snapshots/x.png',
        ],
      }),
    ).toEqual([
      'FAIL: snapshots: 2 snapshot files belong to no test file: test/__snapshots__/gone.test.ts.snap, e2e/gone.spec.ts-snapshots/x.png',
    ]);
    expect(failLines({ ...green, untrackedSnapshots: ['e2e/app.spec.ts-snapshots/app.png'] })).toEqual([
      'FAIL: snapshots: 1 snapshot files are not committed (written by a run?): e2e/app.spec.ts-snapshots/app.png',
    ]);
    expect(failLines({ ...green, untrackedSnapshots: { problem: 'git could not say' } })).toEqual([
      'FAIL: snapshots: git could not say',
    ]);
    expect(snapshotOwner('src/kernels/mmq/__snapshots__/mmq.test.ts.snap')).toBe(
      'src/kernels/mmq/mmq.test.ts',
    );
    expect(snapshotOwner('e2e/layout.spec.ts-snapshots/layout-1024x768.png')).toBe('e2e/layout.spec.ts');
    expect(snapshotOwner('test/fixtures/x.snap')).toBeUndefined();
  });

  it('Playwright: a screenshot with no baseline, a run free to write one or to honour .only: FAIL', () => {
    const e2e = playwright({
      'app.spec.ts': [['unexpected', ['failed']]],
      'model.spec.ts': [['expected', ['passed']]],
    });
    // What toHaveScreenshot says with updateSnapshots 'none' (CI) when the PNG is missing.
    e2e.suites[0]!.specs[0]!.tests[0]!.results[0]!.errors = [
      { message: `Error: A snapshot doesn't exist at ${root}/e2e/app.spec.ts-snapshots/app.png.` },
    ];
    expect(failLines({ ...green, e2e: { report: e2e } })).toEqual([
      'FAIL: e2e: 1 screenshots have no committed baseline: e2e/app.spec.ts-snapshots/app.png',
      'FAIL: e2e: 1 tests failed: test 0',
    ]);
    // Playwright's default mode writes the missing PNG and fails; the next run passes on it.
    const loose = playwright({
      'app.spec.ts': [['expected', ['passed']]],
      'model.spec.ts': [['expected', ['passed']]],
    });
    loose.config = { rootDir: `${root}/e2e`, forbidOnly: false, updateSnapshots: 'default' };
    expect(failLines({ ...green, e2e: { report: loose } })).toEqual([
      "FAIL: e2e: Playwright ran with updateSnapshots 'default', so a missing screenshot is written instead of compared (CI=true sets 'none')",
      'FAIL: e2e: Playwright ran without forbidOnly, so a .only passes (CI=true sets it)',
    ]);
    // A .only under forbidOnly: Playwright runs nothing and says why.
    const only = playwright({});
    only.errors = [
      {
        message:
          "Error: item focused with '.only' is not allowed due to the '--forbid-only' CLI flag: \"app.spec.ts:3:6 › x\"",
      },
    ];
    expect(failLines({ ...green, e2e: { report: only } })).toEqual([
      `FAIL: e2e: Error: item focused with '.only' is not allowed due to the '--forbid-only' CLI flag: "app.spec.ts:3:6 › x"`,
      'FAIL: e2e: 2 of 2 test files never reported: e2e/app.spec.ts, e2e/model.spec.ts',
      'FAIL: e2e: no test passed',
    ]);
  });

  it('a test file stopped at its wall-clock limit: FAIL, naming it', () => {
    expect(
      failLines({ ...green, stopped: [{ file: 'test/b.test.ts', limitS: 300, elapsedS: 301 }] }),
    ).toEqual([
      'FAIL: unit: test/b.test.ts was stopped at its wall-clock limit (301 s of 300 s): a test that never yields, or one too slow for this machine',
    ]);
  });
});

describe('skipping through test/skip.ts', () => {
  it('refuses a skip whose reason does not hold here, and records none', async () => {
    // ONNX Runtime "installed" where bench/ort.ts looks first: 'no-onnxruntime' is then false.
    const dir = mkdtempSync(join(tmpdir(), 'ci-skip-'));
    mkdirSync(join(dir, 'node_modules', 'onnxruntime-node'), { recursive: true });
    writeFileSync(
      join(dir, 'node_modules', 'onnxruntime-node', 'package.json'),
      '{"name":"onnxruntime-node"}',
    );
    const saved = process.env.MMQ_ORT_DIR;
    process.env.MMQ_ORT_DIR = dir;
    const skipped: string[] = [];
    const ctx = {
      task: { meta: {} },
      skip: (note?: string) => skipped.push(note ?? ''),
    } as unknown as Parameters<typeof skipBecause>[0];
    try {
      await expect(skipBecause(ctx, 'no-onnxruntime', 'it failed to load')).rejects.toThrow(
        `this test would skip because ONNX Runtime is not installed ($MMQ_ORT_DIR or bench/.ort, from bench/install-ort.sh; CI never installs it), but here onnxruntime-node is installed in ${dir}; it says: it failed to load`,
      );
      expect(skipped).toEqual([]);
      expect(ctx.task.meta).toEqual({});
    } finally {
      if (saved === undefined) delete process.env.MMQ_ORT_DIR;
      else process.env.MMQ_ORT_DIR = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the mutation smoke (.ci/mutationSmoke.ts, stryker.config.mjs)', () => {
  it('reports its score and survivors; fails when it did not run, ran out of time, or scored under break', () => {
    expect(
      failLines({ ...green, mutation: { problem: '.test-results/mutation-smoke.json is missing' } }),
    ).toEqual(['FAIL: mutate: .test-results/mutation-smoke.json is missing']);
    expect(failLines({ ...green, smoke: { ...green.smoke!, timedOutS: 360 } })).toEqual([
      'FAIL: mutate: the smoke ran past its 360 s limit and was stopped (MMQ_MUTATE_LIMIT_S)',
    ]);
    expect(failLines({ ...green, breakAt: 95 })).toEqual([
      'FAIL: mutate: the smoke scored 90.0%, under the break threshold 95%',
    ]);
    expect(ciVerdict({ ...green, breakAt: 90 }).pass).toBe(true);
    expect(
      failLines({
        ...green,
        mutation: { report: { files: { 'cli/args.ts': { mutants: [mutant('CompileError')] } } } },
      }),
    ).toEqual(['FAIL: mutate: the smoke scored no mutant']);
  });

  it("a commit's added and changed lines, as Stryker ranges, at most so many", () => {
    const diff = [
      'diff --git a/cli/args.ts b/cli/args.ts',
      '--- a/cli/args.ts',
      '+++ b/cli/args.ts',
      '@@ -10,2 +10,3 @@ export function parse',
      '@@ -40 +41 @@',
      '@@ -50,4 +52,0 @@',
      'diff --git a/src/kernels/tune/gone.ts b/src/kernels/tune/gone.ts',
      '--- a/src/kernels/tune/gone.ts',
      '+++ /dev/null',
      '@@ -1,9 +0,0 @@',
      '+++ b/src/kernels/tune/rounds.ts',
      '@@ -0,0 +1,30 @@',
    ].join('\n');
    const ranges = changedRanges(diff);
    expect(ranges).toEqual([
      { file: 'cli/args.ts', from: 10, to: 12 },
      { file: 'cli/args.ts', from: 41, to: 41 },
      { file: 'src/kernels/tune/rounds.ts', from: 1, to: 30 },
    ]);
    expect(mutateSpecs(ranges, 100)).toEqual([
      'cli/args.ts:10-12',
      'cli/args.ts:41-41',
      'src/kernels/tune/rounds.ts:1-30',
    ]);
    expect(mutateSpecs(ranges, 10)).toEqual([
      'cli/args.ts:10-12',
      'cli/args.ts:41-41',
      'src/kernels/tune/rounds.ts:1-6',
    ]);
    expect(mutateSpecs(ranges, 3)).toEqual(['cli/args.ts:10-12']);
  });

  it('what the smoke wrote: why, the files, and its time limit if it hit it', () => {
    expect(parseSmoke('changed by 1a2b3c4\ncli/args.ts\nsrc/kernels/tune/rounds.ts\n')).toEqual({
      why: 'changed by 1a2b3c4',
      files: ['cli/args.ts', 'src/kernels/tune/rounds.ts'],
    });
    expect(parseSmoke('changed by 1a2b3c4\ncli/args.ts\nTIMEOUT 360\n')).toEqual({
      why: 'changed by 1a2b3c4',
      files: ['cli/args.ts'],
      timedOutS: 360,
    });
  });

  it('scores per area: each kernels folder, the shared kernel files, app logic, workers, cli', () => {
    expect(
      [
        'src/kernels/quant/q4k.ts',
        'src/kernels/mmq/mmq.plan.ts',
        'src/kernels/compare.ts',
        'src/app/store/state.ts',
        'src/workers/run.ts',
        'cli/run.ts',
      ].map(areaOf),
    ).toEqual(['kernels/quant', 'kernels/mmq', 'kernels (shared)', 'app logic', 'workers', 'cli']);
    const report: MutationReport = {
      files: {
        'src/kernels/perf/spread.ts': { mutants: [mutant('Killed'), mutant('Survived', 2)] },
        'src/kernels/perf/estimate.ts': {
          mutants: [mutant('Timeout'), mutant('NoCoverage', 3), mutant('CompileError')],
        },
        'cli/args.ts': { mutants: [mutant('Killed')] },
      },
    };
    const scores = scoreByArea(report);
    expect([...scores.keys()]).toEqual(['cli', 'kernels/perf', 'all']);
    expect(scores.get('kernels/perf')).toEqual({
      files: 2,
      killed: 1,
      timeout: 1,
      survived: 1,
      noCoverage: 1,
      errors: 1,
      score: 50,
    });
    expect(scores.get('all')!.score).toBe(60);
    expect(scoreTable(scores)).toEqual([
      'area          files  killed  timeout  survived  no cov  errors   score',
      'cli               1       1        0         0       0       0  100.0%',
      'kernels/perf      2       1        1         1       1       1   50.0%',
      'all               3       2        1         1       1       1   60.0%',
    ]);
    expect(survivors(report)).toEqual([
      'src/kernels/perf/spread.ts:2:5 ConditionalExpression -> false',
      'src/kernels/perf/estimate.ts:3:5 (no test) ConditionalExpression -> false',
    ]);
  });

  it("stryker.config.mjs's globs: each selects a file, and a commit's product files are picked from its changes", async () => {
    expect(globRegExp('src/kernels/*/*.{plan,oracle}.ts').test('src/kernels/mmq/mmq.plan.ts')).toBe(true);
    expect(globRegExp('src/kernels/quant/**/*.ts').test('src/kernels/quant/q4k.ts')).toBe(true);
    expect(globRegExp('src/kernels/quant/**/*.ts').test('src/kernels/quantx/q4k.ts')).toBe(false);
    const { mutate } = await readStrykerSettings(ROOT);
    const { unit } = listTestFiles(ROOT);
    const tree = [
      ...unit,
      ...['src', 'cli'].flatMap((d) =>
        readdirSync(join(ROOT, d), { recursive: true, encoding: 'utf8' }).map((f) => `${d}/${f}`),
      ),
    ];
    for (const glob of mutate.filter((g) => !g.startsWith('!')))
      expect(
        tree.some((f) => globRegExp(glob).test(f)),
        glob,
      ).toBe(true);
    expect(
      mutatedOf(
        [
          'README.md',
          'src/kernels/perf/spread.ts',
          'src/kernels/mmq/mmq.wgsl.ts',
          'src/kernels/perf/estimate.test.ts',
          'src/app/App.tsx',
          'src/kernels/index.ts',
          'cli/run.ts',
          'src/kernels/mmq/mmq.plan.ts',
          'src/app/store/state.ts',
        ],
        mutate,
      ),
    ).toEqual([
      'src/kernels/perf/spread.ts',
      'cli/run.ts',
      'src/kernels/mmq/mmq.plan.ts',
      'src/app/store/state.ts',
    ]);
  });
});

describe('reading what the runners left', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ci-summary-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };

  it('a report is read whole, or named as missing, cut short or foreign', () => {
    const whole = JSON.stringify(vitest({ 'src/a.test.ts': ['passed'] }));
    expect(readReport(write('ok.json', whole), isVitestReport)).toEqual({ report: JSON.parse(whole) });
    expect(readReport(join(dir, 'none.json'), isVitestReport)).toEqual({
      problem: `${join(dir, 'none.json')} is missing (the runner did not finish)`,
    });
    expect(readReport(write('cut.json', whole.slice(0, 40)), isVitestReport)).toMatchObject({
      problem: expect.stringMatching(/is not JSON \(40 bytes; cut short\?\)$/),
    });
    expect(readReport(write('pw.json', whole), isPlaywrightReport)).toMatchObject({
      problem: expect.stringMatching(/is not the report expected$/),
    });
  });

  it('the files the wall-clock limit stopped, one JSON line each, other lines ignored', () => {
    expect(
      parseStopped('{"file":"test/a.test.ts","limitS":300,"elapsedS":301}\n{"file":1}\nnot json\n'),
    ).toEqual([{ file: 'test/a.test.ts', limitS: 300, elapsedS: 301 }]);
  });

  it("the tiers' exit codes, as .ci/run appends them", () => {
    expect([...parseExits('check=0\nunit=1\n\nbuild=0\ne2e=137\n')]).toEqual([
      ['check', 0],
      ['unit', 1],
      ['build', 0],
      ['e2e', 137],
    ]);
  });

  it('lists the test files from the tree, as vitest.config.ts and playwright.config.ts select them', () => {
    const { unit, e2e, snapshots } = listTestFiles(ROOT);
    expect(unit).toContain('test/ciSummary.test.ts');
    expect(unit).toContain('src/app/worker/client.test.ts');
    expect(unit.every((f) => /^(src|test)\/.*\.test\.tsx?$/.test(f))).toBe(true);
    expect(e2e).toContain('e2e/app.spec.ts');
    expect(e2e.every((f) => /^e2e\/.*\.spec\.ts$/.test(f))).toBe(true);
    expect(snapshots).toContain('e2e/layout.spec.ts-snapshots/layout-1024x768.png');
    expect(snapshots).toContain('src/kernels/mmq/__snapshots__/mmq-q8-naive.scalar.wgsl');
    const owned = snapshots.filter((f) => snapshotOwner(f) !== undefined);
    expect(owned.length).toBeGreaterThan(0);
    expect(owned.filter((f) => ![...unit, ...e2e].includes(snapshotOwner(f)!))).toEqual([]);
  });
});

/** Whether a process runs: killed, it is gone or a zombie its new parent has not reaped yet. */
function running(pid: string): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

describe('the per-file wall-clock limit (.ci/fileLimit.ts)', () => {
  it('stops a file whose test spins without yielding, in seconds, naming it, with what it started', async () => {
    // A vitest run of its own, in a folder under the root (so `vitest` resolves), on a 3 s limit: its one
    // test starts a child, then never yields, so no timer in its fork can fire.
    mkdirSync(join(ROOT, '.test-results'), { recursive: true });
    const dir = mkdtempSync(join(ROOT, '.test-results', 'file-limit-'));
    try {
      const started = Date.now();
      writeFileSync(
        join(dir, 'spin.test.mjs'),
        `import { it } from 'vitest';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
it('spins', () => {
  writeFileSync(${JSON.stringify(join(dir, 'child.pid'))}, String(spawn('sleep', ['120']).pid));
  for (;;);
});
`,
      );
      writeFileSync(
        join(dir, 'vitest.config.mjs'),
        `import { defineConfig } from 'vitest/config';
import FileLimitReporter from ${JSON.stringify(join(ROOT, '.ci', 'fileLimit.ts'))};
export default defineConfig({ test: { include: ['*.test.mjs'], pool: 'forks',
  poolOptions: { forks: { singleFork: true } }, reporters: [new FileLimitReporter(3)] } });
`,
      );
      const vitest = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
      const r = await runProcess(process.execPath, [vitest, 'run', '--root', dir], {
        cwd: dir,
        timeoutMs: 90_000,
      });
      expect(r.status).not.toBe(0);
      expect(r.stderr).toMatch(
        /\[file limit\] spin\.test\.mjs has run \d+ s, past its 3 s limit .*killing the test fork/,
      );
      expect(parseStopped(readFileSync(join(dir, '.test-results', 'file-limit.jsonl'), 'utf8'))).toEqual([
        { file: 'spin.test.mjs', limitS: 3, elapsedS: expect.any(Number) },
      ]);
      // Within a minute even on a loaded machine, not at .ci/run's tier limit; the child went with the fork.
      expect(Date.now() - started).toBeLessThan(60_000);
      const child = readFileSync(join(dir, 'child.pid'), 'utf8');
      expect(running(child)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
