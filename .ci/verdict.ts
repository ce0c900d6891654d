// CI's verdict, from what the runners said and what they should have run: every tier's exit code, and the
// JSON reports checked against the test files listed here, independently of the runners. A runner that
// dies mid-suite can leave a report that says `success: true` over the files it finished; the files and
// tests it never ran make the verdict FAIL, with a line saying which. So do the ways to pass without
// running: a skip that .ci/skips.ts does not declare (a .only, a .skip, an arm the product wrongly calls
// unavailable), a snapshot written, overwritten or left obsolete by the run, a Playwright run free to write
// missing screenshots or to honour .only, and a test file stopped by its wall-clock limit (.ci/fileLimit.ts).
// Last, the mutation smoke's score (.ci/mutationSmoke.ts), which fails only under stryker.config.mjs's
// `break` threshold, and a smoke that did not run or ran out of time.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { percent, scoreByArea, survivors, type MutationReport } from './mutation';
import { allowedSkip } from './skips';

/** The tiers .ci/run runs, in order; each records its exit code. */
export const TIERS = ['check', 'unit', 'build', 'e2e', 'mutate'] as const;

/** Vitest's JSON reporter, the fields read here. */
export interface VitestReport {
  success: boolean;
  numTotalTests: number;
  numPassedTests: number;
  numFailedTests: number;
  /** What the run did to snapshots (vitest's snapshot summary). */
  snapshot: VitestSnapshots;
  testResults: {
    name: string;
    status: string;
    message?: string;
    assertionResults: {
      status: string;
      fullName: string;
      /** test/skip.ts records why a test skipped as `skipReason`. */
      meta?: { skipReason?: string };
    }[];
  }[];
}

/** Vitest's snapshot summary, the fields read here. */
export interface VitestSnapshots {
  /** Snapshots written because none existed (a run without CI=true writes them and passes). */
  added: number;
  filesAdded: number;
  /** Snapshots overwritten (vitest -u). */
  updated: number;
  /** Obsolete snapshots: stored, but no test checked them. */
  unchecked: number;
  uncheckedKeysByFile: { filePath: string; keys: string[] }[];
  /** Obsolete snapshot files. */
  filesRemoved: number;
  filesRemovedList?: string[];
}

/** Playwright's JSON reporter, the fields read here. */
export interface PlaywrightReport {
  config?: { rootDir?: string; forbidOnly?: boolean; updateSnapshots?: string };
  stats: { expected: number; unexpected: number; flaky: number; skipped: number };
  suites: PlaywrightSuite[];
  errors?: { message?: string }[];
}

export interface PlaywrightSuite {
  title: string;
  file: string;
  specs: {
    title: string;
    tests: {
      status: string;
      annotations?: { type: string; description?: string }[];
      results: { status: string; errors?: { message?: string }[] }[];
    }[];
  }[];
  suites?: PlaywrightSuite[];
}

/** What .ci/fileLimit.ts left: the test file it stopped, if it stopped one. */
export interface FileLimitRecord {
  file: string;
  limitS: number;
  elapsedS: number;
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
  /** Snapshot files in the tree (vitest's __snapshots__, Playwright's *-snapshots), relative to root. */
  snapshotFiles: readonly string[];
  /** Those of them git does not track (written by a run?), or why git could not say. */
  untrackedSnapshots: readonly string[] | { problem: string };
  /** The test files .ci/fileLimit.ts stopped at their wall-clock limit (none: an empty list). */
  stopped: readonly FileLimitRecord[];
  /** The mutation smoke's Stryker report, what it chose (undefined: no record), and the break threshold. */
  mutation: Read<MutationReport>;
  smoke: SmokeRecord | undefined;
  breakAt: number | null;
}

/** What .ci/mutationSmoke.ts wrote: why it chose its files, the files, and its time limit if it hit it. */
export interface SmokeRecord {
  why: string;
  files: string[];
  timedOutS?: number;
}

/**
 * Parse .test-results/mutation-smoke.txt: the reason, one file a line, and `TIMEOUT <s>` if it ran out.
 * @example parseSmoke('changed by 1a2b3c4\ncli/args.ts\n') // { why: 'changed by 1a2b3c4', files: ['cli/args.ts'] }
 */
export function parseSmoke(text: string): SmokeRecord {
  const [why = '', ...rest] = text.split('\n').filter(Boolean);
  const timeout = rest.map((l) => /^TIMEOUT (\d+)$/.exec(l)).find((m) => m);
  return {
    why,
    files: rest.filter((l) => !/^TIMEOUT \d+$/.test(l)),
    ...(timeout ? { timedOutS: Number(timeout[1]) } : {}),
  };
}

export interface Verdict {
  pass: boolean;
  /** What CI prints: counts per tier, one `FAIL: ...` line per problem, the verdict last. */
  lines: string[];
}

/**
 * The test files under `root` that the runners should run: `*.test.ts(x)` under test/ and src/ (vitest),
 * `*.spec.ts` under e2e/ (Playwright), relative paths, sorted; and the snapshot files beside them
 * (`__snapshots__/*.snap`, `e2e/<spec>-snapshots/*`).
 * @example listTestFiles(process.cwd()).unit // ['src/app/controller.test.ts', ..., 'test/cli.test.ts', ...]
 */
export function listTestFiles(root: string): { unit: string[]; e2e: string[]; snapshots: string[] } {
  const walk = (dir: string, match: (path: string) => boolean): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory()) return e.name === 'node_modules' ? [] : walk(path, match);
      return match(path) ? [path] : [];
    });
  const named = (re: RegExp) => (path: string) => re.test(path);
  return {
    unit: [...walk('test', named(/\.test\.tsx?$/)), ...walk('src', named(/\.test\.tsx?$/))].sort(),
    e2e: walk('e2e', named(/\.spec\.ts$/)).sort(),
    snapshots: [
      ...walk('test', named(/\/__snapshots__\/[^/]+$/)),
      ...walk('src', named(/\/__snapshots__\/[^/]+$/)),
      ...walk('e2e', named(/^e2e\/[^/]+-snapshots\//)),
    ].sort(),
  };
}

/**
 * The test file a snapshot file belongs to: `dir/__snapshots__/x.test.ts.snap` is `dir/x.test.ts`'s,
 * `e2e/x.spec.ts-snapshots/*` is `e2e/x.spec.ts`'s (playwright.config.ts's snapshotPathTemplate); a file
 * snapshot (toMatchFileSnapshot, any other name) names none.
 * @example snapshotOwner('src/kernels/mmq/__snapshots__/mmq.test.ts.snap') // 'src/kernels/mmq/mmq.test.ts'
 */
export function snapshotOwner(path: string): string | undefined {
  const vitest = /^(.*)\/__snapshots__\/([^/]+)\.snap$/.exec(path);
  if (vitest) return `${vitest[1]}/${vitest[2]}`;
  const playwright = /^(e2e\/[^/]+)-snapshots\//.exec(path);
  return playwright?.[1];
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
 * Parse the JSON lines .ci/fileLimit.ts appends, one per test file it stopped; other lines are ignored.
 * @example parseStopped('{"file":"test/a.test.ts","limitS":300,"elapsedS":301}\n') // [{ file: 'test/a.test.ts', ... }]
 */
export function parseStopped(text: string): FileLimitRecord[] {
  return text.split('\n').flatMap((line) => {
    try {
      const r: unknown = JSON.parse(line);
      return isObject(r) &&
        typeof r.file === 'string' &&
        typeof r.limitS === 'number' &&
        typeof r.elapsedS === 'number'
        ? [{ file: r.file, limitS: r.limitS, elapsedS: r.elapsedS }]
        : [];
    } catch {
      return [];
    }
  });
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
  isObject(x.snapshot) &&
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
  /** The skips .ci/skips.ts allows, by reason. */
  expected: ReadonlyMap<string, number>;
  files: ReadonlySet<string>;
}

interface Skipped {
  file: string;
  name: string;
  /** The reason the test gave (test/skip.ts), if any. */
  reason: string | undefined;
}

/**
 * Sort skips into those .ci/skips.ts allows (counted by reason) and the rest, one FAIL line each kind: a
 * skip with no reason (a .only leaving the others, a .skip, .todo, a skip the product decided) and one
 * whose reason the list does not allow for that test.
 */
function checkSkips(tier: string, skipped: readonly Skipped[], fail: (line: string) => void) {
  const expected = new Map<string, number>();
  const unexplained: string[] = [];
  const disallowed: string[] = [];
  for (const s of skipped) {
    if (s.reason === undefined) unexplained.push(`${s.file}: ${s.name}`);
    else if (!allowedSkip(s.file, s.name, s.reason)) disallowed.push(`${s.file}: ${s.name} (${s.reason})`);
    else expected.set(s.reason, (expected.get(s.reason) ?? 0) + 1);
  }
  if (unexplained.length)
    fail(
      `${tier}: ${unexplained.length} tests skipped without a declared reason (.only, .skip, .todo, or a skip the code decided; .ci/skips.ts lists the allowed ones): ${some(unexplained)}`,
    );
  if (disallowed.length)
    fail(
      `${tier}: ${disallowed.length} tests skipped for a reason .ci/skips.ts does not allow them: ${some(disallowed)}`,
    );
  return expected;
}

/** The snapshot summary: anything written, overwritten or obsolete means the run checked less than it says. */
function checkSnapshots(s: VitestSnapshots, root: string, fail: (line: string) => void) {
  if (s.added)
    fail(
      `unit: ${s.added} snapshots written by the run (${s.filesAdded} new files): a missing snapshot is written, not compared; run with CI=true and commit the .snap`,
    );
  if (s.updated) fail(`unit: ${s.updated} snapshots overwritten by the run (vitest -u)`);
  if (s.unchecked) {
    const keys = s.uncheckedKeysByFile.flatMap((f) =>
      f.keys.map((k) => `${relative(root, f.filePath)}: ${k}`),
    );
    fail(`unit: ${s.unchecked} obsolete snapshots (stored, checked by no test): ${some(keys)}`);
  }
  if (s.filesRemoved)
    fail(
      `unit: ${s.filesRemoved} obsolete snapshot files: ${some((s.filesRemovedList ?? []).map((f) => relative(root, f)))}`,
    );
}

/** Vitest's report: its files and tests, and whether they agree with its totals. */
function checkUnit(r: VitestReport, root: string, fail: (line: string) => void): Ran {
  const files = new Map(r.testResults.map((f) => [relative(root, f.name), f]));
  const tests = r.testResults.flatMap((f) => f.assertionResults.map((t) => ({ f, t })));
  const of = (...statuses: string[]) => tests.filter(({ t }) => statuses.includes(t.status));
  const skipped = of('skipped', 'todo').map(({ f, t }) => ({
    file: relative(root, f.name),
    name: t.fullName,
    reason: t.meta?.skipReason,
  }));
  const counts: Ran = {
    passed: of('passed').length,
    failed: of('failed').length,
    skipped: skipped.length,
    expected: checkSkips('unit', skipped, fail),
    files: new Set(files.keys()),
  };
  checkSnapshots(r.snapshot, root, fail);
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

type PlaywrightTest = PlaywrightSuite['specs'][number]['tests'][number];

/** A Playwright test that was skipped on purpose (test.skip / test.fixme), not one that never ran. */
const skippedOnPurpose = (t: PlaywrightTest) =>
  t.status === 'skipped' && (t.annotations ?? []).some((a) => a.type === 'skip' || a.type === 'fixme');

/** The reason a Playwright skip gave: `test.skip(condition, reason)` puts it in the annotation. */
const playwrightSkipReason = (t: PlaywrightTest) =>
  (t.annotations ?? []).find((a) => a.type === 'skip')?.description;

/** Where a missing screenshot baseline was looked for, from Playwright's "A snapshot doesn't exist at ..." */
const MISSING_BASELINE = /A snapshot doesn't exist at (.+?)(?:, writing actual)?\.?$/m;

/** Playwright's report: its spec files and tests, which of them never ran, and its stats against them. */
function checkE2e(r: PlaywrightReport, root: string, fail: (line: string) => void): Ran {
  const rootDir = r.config?.rootDir ?? join(root, 'e2e');
  const tests: { file: string; title: string; status: string; ran: boolean; test: PlaywrightTest }[] = [];
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
          test: t,
        });
    for (const inner of s.suites ?? []) collect(inner, file, [...path, inner.title]);
  };
  for (const s of r.suites) collect(s, relative(root, join(rootDir, s.file)), []);
  const of = (status: string) => tests.filter((t) => t.status === status);
  const counts: Ran = {
    passed: of('expected').length + of('flaky').length,
    failed: of('unexpected').length,
    skipped: of('skipped').length,
    expected: checkSkips(
      'e2e',
      of('skipped')
        .filter((t) => skippedOnPurpose(t.test))
        .map((t) => ({ file: t.file, name: t.title, reason: playwrightSkipReason(t.test) })),
      fail,
    ),
    files: new Set(tests.map((t) => t.file)),
  };
  // Under CI=true playwright.config.ts compares screenshots only and refuses .only; a run that could write a
  // missing baseline, or run one focused test, checked less than its counts say.
  const config = r.config ?? {};
  if (config.updateSnapshots !== 'none')
    fail(
      `e2e: Playwright ran with updateSnapshots '${config.updateSnapshots ?? 'unknown'}', so a missing screenshot is written instead of compared (CI=true sets 'none')`,
    );
  if (config.forbidOnly !== true)
    fail('e2e: Playwright ran without forbidOnly, so a .only passes (CI=true sets it)');
  const missing = tests.flatMap((t) =>
    t.test.results.flatMap((x) =>
      (x.errors ?? []).flatMap((e) => MISSING_BASELINE.exec(e.message ?? '')?.slice(1, 2) ?? []),
    ),
  );
  if (missing.length)
    fail(
      `e2e: ${missing.length} screenshots have no committed baseline: ${some(missing.map((p) => relative(root, p)))}`,
    );
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

/** The smoke's line: its score, what it mutated and why; a FAIL when it did not run, or scored under break. */
function checkMutation(inputs: CiInputs, fail: (line: string) => void, lines: string[]) {
  const { smoke, breakAt } = inputs;
  if (smoke?.timedOutS)
    fail(`mutate: the smoke ran past its ${smoke.timedOutS} s limit and was stopped (MMQ_MUTATE_LIMIT_S)`);
  if ('problem' in inputs.mutation) return fail(`mutate: ${inputs.mutation.problem}`);
  const report = inputs.mutation.report;
  const all = scoreByArea(report).get('all')!;
  const valid = all.killed + all.timeout + all.survived + all.noCoverage;
  lines.push(
    `mutate: ${percent(all.score)} of ${valid} mutants killed in ${some(Object.keys(report.files))}` +
      ` (${smoke?.why ?? 'no record of why'}): ${all.killed} killed, ${all.timeout} timed out, ${all.survived} survived, ${all.noCoverage} run by no test; break threshold ${breakAt ?? 'none yet'}`,
  );
  if (!valid) return fail('mutate: the smoke scored no mutant');
  const missed = survivors(report);
  if (missed.length) lines.push(`mutate: not killed: ${some(missed)}`);
  if (breakAt !== null && all.score < breakAt)
    fail(`mutate: the smoke scored ${percent(all.score)}, under the break threshold ${breakAt}%`);
}

/**
 * PASS only when every tier exited 0 and both reports account for every test file given, every test
 * finished, none failed, every skip is one .ci/skips.ts allows, no snapshot was written, overwritten,
 * left obsolete or left uncommitted, and the mutation smoke ran and scored at least its break threshold.
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
    const reasons = [...ran.expected].map(([reason, n]) => `${n} ${reason}`).join(', ');
    lines.push(
      `${tier}: ${ran.passed} passed, ${ran.failed} failed, ${ran.skipped} skipped${reasons ? ` (expected: ${reasons})` : ''}, in ${given.length - missing.length} of ${given.length} files`,
    );
  };
  for (const s of inputs.stopped)
    fail(
      `unit: ${s.file} was stopped at its wall-clock limit (${s.elapsedS} s of ${s.limitS} s): a test that never yields, or one too slow for this machine`,
    );
  account('unit', inputs.unit, inputs.unitFiles, checkUnit);
  account('e2e', inputs.e2e, inputs.e2eFiles, checkE2e);
  const given = new Set([...inputs.unitFiles, ...inputs.e2eFiles]);
  // toMatchFileSnapshot's files (e.g. __snapshots__/mmq-q8-naive.scalar.wgsl) name no owner by their path:
  // vitest counts them written or compared, and the check for uncommitted files below covers them.
  const orphans = inputs.snapshotFiles.filter((f) => {
    const owner = snapshotOwner(f);
    return owner !== undefined && !given.has(owner);
  });
  if (orphans.length)
    fail(`snapshots: ${orphans.length} snapshot files belong to no test file: ${some(orphans)}`);
  checkMutation(inputs, fail, lines);
  const untracked = inputs.untrackedSnapshots;
  if ('problem' in untracked) fail(`snapshots: ${untracked.problem}`);
  else if (untracked.length)
    fail(
      `snapshots: ${untracked.length} snapshot files are not committed (written by a run?): ${some(untracked)}`,
    );
  const pass = problems.length === 0;
  lines.push(...problems.map((p) => `FAIL: ${p}`));
  lines.push(pass ? 'CI: PASS' : `CI: FAIL (${problems.length} problem${problems.length === 1 ? '' : 's'})`);
  return { pass, lines };
}
