// CI's verdict (.ci/verdict.ts): a pass needs every tier's exit code 0 AND reports that account for every
// test file the runners were given. A runner that died mid-suite once left `success: true` over the 10
// files it finished, with 42 never run; that, a non-zero runner with every test passing, and a missing or
// cut-short report must all read FAIL.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ciVerdict,
  isPlaywrightReport,
  isVitestReport,
  listTestFiles,
  parseExits,
  readReport,
  type CiInputs,
  type PlaywrightReport,
  type PlaywrightSuite,
  type VitestReport,
} from '../.ci/verdict';
import { ROOT } from './cliProcess';

const root = '/repo';
const unitFiles = ['src/a.test.ts', 'test/b.test.ts', 'test/c.test.ts'];
const e2eFiles = ['e2e/app.spec.ts', 'e2e/model.spec.ts'];

/** A vitest report: `tests` per file, each 'passed' unless given another status. */
function vitest(files: Record<string, string[]>, over: Partial<VitestReport> = {}): VitestReport {
  const testResults = Object.entries(files).map(([name, statuses]) => ({
    name: `${root}/${name}`,
    status: statuses.includes('failed') ? 'failed' : 'passed',
    assertionResults: statuses.map((status, i) => ({ status, fullName: `${name} #${i}` })),
  }));
  const all = Object.values(files).flat();
  return {
    success: !all.includes('failed'),
    numTotalTests: all.length,
    numPassedTests: all.filter((s) => s === 'passed').length,
    numFailedTests: all.filter((s) => s === 'failed').length,
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
    config: { rootDir: `${root}/e2e` },
    stats: { expected: n('expected'), unexpected: n('unexpected'), flaky: n('flaky'), skipped: n('skipped') },
    suites,
  };
}

const green: CiInputs = {
  exits: new Map([
    ['check', 0],
    ['unit', 0],
    ['build', 0],
    ['e2e', 0],
  ]),
  root,
  unitFiles,
  e2eFiles,
  unit: {
    report: vitest({
      'src/a.test.ts': ['passed', 'passed'],
      'test/b.test.ts': ['passed', 'skipped'],
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
};

const failLines = (inputs: CiInputs) => ciVerdict(inputs).lines.filter((l) => l.startsWith('FAIL: '));

describe('CI verdict', () => {
  it('every tier 0, every file and test accounted for: PASS, with its own counts', () => {
    const v = ciVerdict(green);
    expect(v.pass).toBe(true);
    expect(v.lines).toEqual([
      'tiers: check 0, unit 0, build 0, e2e 0',
      'unit: 4 passed, 0 failed, 1 skipped, in 3 of 3 files',
      'e2e: 3 passed, 0 failed, 0 skipped, in 2 of 2 files',
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

  it('a test skipped on purpose is not one that never ran', () => {
    const e2e = playwright({ 'app.spec.ts': [['expected', ['passed']]], 'model.spec.ts': [['skipped', []]] });
    e2e.suites[1]!.specs[0]!.tests[0]!.annotations = [{ type: 'skip' }];
    expect(ciVerdict({ ...green, e2e: { report: e2e } }).pass).toBe(true);
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
      'tiers: check did not finish, unit did not finish, build did not finish, e2e did not finish',
    );
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

  it("the tiers' exit codes, as .ci/run appends them", () => {
    expect([...parseExits('check=0\nunit=1\n\nbuild=0\ne2e=137\n')]).toEqual([
      ['check', 0],
      ['unit', 1],
      ['build', 0],
      ['e2e', 137],
    ]);
  });

  it('lists the test files from the tree, as vitest.config.ts and playwright.config.ts select them', () => {
    const { unit, e2e } = listTestFiles(ROOT);
    expect(unit).toContain('test/ciSummary.test.ts');
    expect(unit).toContain('src/app/worker/client.test.ts');
    expect(unit.every((f) => /^(src|test)\/.*\.test\.tsx?$/.test(f))).toBe(true);
    expect(e2e).toContain('e2e/app.spec.ts');
    expect(e2e.every((f) => /^e2e\/.*\.spec\.ts$/.test(f))).toBe(true);
  });
});
