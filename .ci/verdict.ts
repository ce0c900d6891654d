// CI's verdict, from what the runners said and what they should have run: every tier's exit code, and the
// JSON reports checked against the test files listed here, independently of the runners. A runner that
// dies mid-suite can leave a report that says `success: true` over the files it finished; the files and
// tests it never ran make the verdict FAIL, with a line saying which.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The tiers .ci/run runs, in order; each records its exit code. */
export const TIERS = ['check', 'unit', 'build', 'e2e'] as const;

/** Vitest's JSON reporter, the fields read here. */
export interface VitestReport {
  success: boolean;
  numTotalTests: number;
  numPassedTests: number;
  numFailedTests: number;
  testResults: {
    name: string;
    status: string;
    message?: string;
    assertionResults: { status: string; fullName: string }[];
  }[];
}

/** Playwright's JSON reporter, the fields read here. */
export interface PlaywrightReport {
  config?: { rootDir?: string };
  stats: { expected: number; unexpected: number; flaky: number; skipped: number };
  suites: PlaywrightSuite[];
  errors?: { message?: string }[];
}

export interface PlaywrightSuite {
  title: string;
  file: string;
  specs: {
    title: string;
    tests: { status: string; annotations?: { type: string }[]; results: { status: string }[] }[];
  }[];
  suites?: PlaywrightSuite[];
}

/** A report as read from disk, or why it could not be. */
export type Read<T> = { report: T } | { problem: string };

export interface CiInputs {
  /** Each tier's exit code as .ci/run recorded it (a tier absent here never finished). */
  exits: ReadonlyMap<string, number>;
  /** The repository root (reports name files by absolute path). */
  root: string;
  /** The test files vitest was given and the spec files Playwright was given, relative to root. */
  unitFiles: readonly string[];
  e2eFiles: readonly string[];
  unit: Read<VitestReport>;
  e2e: Read<PlaywrightReport>;
}

export interface Verdict {
  pass: boolean;
  /** What CI prints: counts per tier, one `FAIL: ...` line per problem, the verdict last. */
  lines: string[];
}

/**
 * The test files under `root` that the runners should run: `*.test.ts(x)` under test/ and src/ (vitest),
 * `*.spec.ts` under e2e/ (Playwright), relative paths, sorted.
 * @example listTestFiles(process.cwd()).unit // ['src/app/controller.test.ts', ..., 'test/cli.test.ts', ...]
 */
export function listTestFiles(root: string): { unit: string[]; e2e: string[] } {
  const walk = (dir: string, match: RegExp): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory()) return e.name === 'node_modules' ? [] : walk(path, match);
      return match.test(e.name) ? [path] : [];
    });
  return {
    unit: [...walk('test', /\.test\.tsx?$/), ...walk('src', /\.test\.tsx?$/)].sort(),
    e2e: walk('e2e', /\.spec\.ts$/).sort(),
  };
}

/** Parse `name=code` lines (what .ci/run appends after each tier). */
export function parseExits(text: string): Map<string, number> {
  const exits = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^(\w[\w-]*)=(\d+)$/.exec(line.trim());
    if (m) exits.set(m[1]!, Number(m[2]));
  }
  return exits;
}

/**
 * Read a JSON report; a missing, empty, truncated or foreign file is a problem, never a pass.
 * @example readReport('.test-results/vitest.json', isVitestReport)
 */
export function readReport<T>(path: string, is: (x: unknown) => x is T): Read<T> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return { problem: `${path} is missing (the runner did not finish)` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { problem: `${path} is not JSON (${text.length} bytes; cut short?)` };
  }
  return is(json) ? { report: json } : { problem: `${path} is not the report expected` };
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null;

export const isVitestReport = (x: unknown): x is VitestReport =>
  isObject(x) &&
  typeof x.success === 'boolean' &&
  typeof x.numTotalTests === 'number' &&
  Array.isArray(x.testResults) &&
  x.testResults.every((f) => isObject(f) && typeof f.name === 'string' && Array.isArray(f.assertionResults));

export const isPlaywrightReport = (x: unknown): x is PlaywrightReport =>
  isObject(x) && isObject(x.stats) && Array.isArray(x.suites);

/** A few names, then how many more. */
const some = (names: readonly string[]) =>
  names.slice(0, 5).join(', ') + (names.length > 5 ? ` and ${names.length - 5} more` : '');

/** What a report says it ran: its tests by outcome and the files (relative to the root) they are in. */
interface Ran {
  passed: number;
  failed: number;
  skipped: number;
  files: ReadonlySet<string>;
}

/** Vitest's report: its files and tests, and whether they agree with its totals. */
function checkUnit(r: VitestReport, root: string, fail: (line: string) => void): Ran {
  const files = new Map(r.testResults.map((f) => [relative(root, f.name), f]));
  const tests = r.testResults.flatMap((f) => f.assertionResults.map((t) => ({ file: f, t })));
  const of = (...statuses: string[]) => tests.filter(({ t }) => statuses.includes(t.status));
  const counts: Ran = {
    passed: of('passed').length,
    failed: of('failed').length,
    skipped: of('skipped', 'todo').length,
    files: new Set(files.keys()),
  };
  const empty = [...files].filter(([, f]) => f.assertionResults.length === 0).map(([name]) => name);
  if (empty.length) fail(`unit: ${empty.length} files reported no tests: ${some(empty)}`);
  const unfinished = tests.filter(({ t }) => !['passed', 'failed', 'skipped', 'todo'].includes(t.status));
  if (unfinished.length)
    fail(`unit: ${unfinished.length} tests never finished: ${some(unfinished.map(({ t }) => t.fullName))}`);
  const failedFiles = [...files].filter(([, f]) => f.status !== 'passed').map(([name]) => name);
  if (counts.failed || failedFiles.length)
    fail(`unit: ${counts.failed} tests failed, in ${failedFiles.length} files: ${some(failedFiles)}`);
  if (r.numTotalTests !== tests.length || r.numPassedTests !== counts.passed)
    fail(
      `unit: the report's totals (${r.numPassedTests} of ${r.numTotalTests} passed) disagree with its tests (${counts.passed} of ${tests.length})`,
    );
  if (!r.success) fail('unit: vitest reported success: false');
  return counts;
}

/** A Playwright test that was skipped on purpose (test.skip / test.fixme), not one that never ran. */
const skippedOnPurpose = (t: PlaywrightSuite['specs'][number]['tests'][number]) =>
  t.status === 'skipped' && (t.annotations ?? []).some((a) => a.type === 'skip' || a.type === 'fixme');

/** Playwright's report: its spec files and tests, which of them never ran, and its stats against them. */
function checkE2e(r: PlaywrightReport, root: string, fail: (line: string) => void): Ran {
  const rootDir = r.config?.rootDir ?? join(root, 'e2e');
  const tests: { file: string; title: string; status: string; ran: boolean }[] = [];
  const collect = (s: PlaywrightSuite, file: string, path: string[]) => {
    for (const spec of s.specs)
      for (const t of spec.tests)
        tests.push({
          file,
          title: [...path, spec.title].join(' > '),
          status: t.status,
          ran:
            skippedOnPurpose(t) ||
            (t.results.length > 0 && t.results.every((x) => x.status !== 'interrupted')),
        });
    for (const inner of s.suites ?? []) collect(inner, file, [...path, inner.title]);
  };
  for (const s of r.suites) collect(s, relative(root, join(rootDir, s.file)), []);
  const of = (status: string) => tests.filter((t) => t.status === status);
  const counts: Ran = {
    passed: of('expected').length + of('flaky').length,
    failed: of('unexpected').length,
    skipped: of('skipped').length,
    files: new Set(tests.map((t) => t.file)),
  };
  const unrun = tests.filter((t) => !t.ran);
  if (unrun.length) fail(`e2e: ${unrun.length} tests never ran: ${some(unrun.map((t) => t.title))}`);
  if (counts.failed)
    fail(`e2e: ${counts.failed} tests failed: ${some(of('unexpected').map((t) => t.title))}`);
  const s = r.stats;
  if (
    s.expected + s.flaky !== counts.passed ||
    s.unexpected !== counts.failed ||
    s.skipped !== counts.skipped
  )
    fail(
      `e2e: the report's stats (${s.expected + s.flaky} passed, ${s.unexpected} failed, ${s.skipped} skipped) disagree with its tests`,
    );
  for (const e of r.errors ?? []) fail(`e2e: ${(e.message ?? 'an error outside any test').split('\n')[0]}`);
  return counts;
}

/**
 * PASS only when every tier exited 0 and both reports account for every test file given, every test
 * finished, none failed.
 * @example ciVerdict(inputs).lines.at(-1) // 'CI: PASS' or 'CI: FAIL (3 problems)'
 */
export function ciVerdict(inputs: CiInputs): Verdict {
  const problems: string[] = [];
  const fail = (line: string) => problems.push(line);
  const lines = [`tiers: ${TIERS.map((t) => `${t} ${inputs.exits.get(t) ?? 'did not finish'}`).join(', ')}`];
  for (const t of TIERS) {
    const code = inputs.exits.get(t);
    if (code === undefined) fail(`${t}: no exit code recorded (the tier did not finish)`);
    else if (code !== 0) fail(`${t}: exited ${code}`);
  }
  /** A tier's report against the files its runner was given: every one reported, some test passed. */
  const account = <T>(
    tier: string,
    read: Read<T>,
    given: readonly string[],
    check: (r: T, root: string, fail: (line: string) => void) => Ran,
  ) => {
    if ('problem' in read) return fail(`${tier}: ${read.problem}`);
    const ran = check(read.report, inputs.root, fail);
    const missing = given.filter((f) => !ran.files.has(f));
    if (missing.length)
      fail(`${tier}: ${missing.length} of ${given.length} test files never reported: ${some(missing)}`);
    if (ran.passed === 0) fail(`${tier}: no test passed`);
    lines.push(
      `${tier}: ${ran.passed} passed, ${ran.failed} failed, ${ran.skipped} skipped, in ${given.length - missing.length} of ${given.length} files`,
    );
  };
  account('unit', inputs.unit, inputs.unitFiles, checkUnit);
  account('e2e', inputs.e2e, inputs.e2eFiles, checkE2e);
  const pass = problems.length === 0;
  lines.push(...problems.map((p) => `FAIL: ${p}`));
  lines.push(pass ? 'CI: PASS' : `CI: FAIL (${problems.length} problem${problems.length === 1 ? '' : 's'})`);
  return { pass, lines };
}
