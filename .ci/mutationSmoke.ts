// CI's small StrykerJS run (.ci/run's `mutate` tier), so mutation testing stays a habit: the lines the last
// commit added or changed in product files (git diff HEAD~1, the files filtered by stryker.config.mjs's
// `mutate` list, at most MAX_LINES lines, so the run stays within minutes however large the commit), or one
// small module when it changed none. It writes Stryker's JSON report to .test-results/mutation-smoke.json
// and what it chose, and why, to .test-results/mutation-smoke.txt; .ci/verdict.ts reads both. It exits
// non-zero when Stryker could not run (its initial test run failed, a bad config) or ran past its time
// limit, so CI fails; the score itself fails CI only under the `break` threshold of stryker.config.mjs.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { changedRanges, mutatedOf, mutateSpecs, readStrykerSettings } from './mutation';

/** At most this many changed lines are mutated: the smoke is a habit, not the campaign. */
export const MAX_LINES = 100;
/** The module mutated when the commit changed no product file (small, its tests fast). */
export const DEFAULT_MODULE = 'src/kernels/tune/rounds.ts';
/** Stryker's whole run is stopped past this (MMQ_MUTATE_LIMIT_S), and the tier fails. */
const LIMIT_S = Number(process.env.MMQ_MUTATE_LIMIT_S) || 360;

const results = '.test-results';
mkdirSync(results, { recursive: true });
const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8', maxBuffer: 64 << 20 });

let specs: string[] = [];
let why: string;
try {
  const commit = git('log', '-1', '--format=%h', 'HEAD').trim();
  const { mutate } = await readStrykerSettings(process.cwd());
  const files = mutatedOf(
    git('diff', '--name-only', 'HEAD~1', 'HEAD')
      .split('\n')
      .filter((f) => f && existsSync(f)),
    mutate,
  );
  const ranges = files.length ? changedRanges(git('diff', '-U0', 'HEAD~1', 'HEAD', '--', ...files)) : [];
  const lines = ranges.reduce((n, r) => n + r.to - r.from + 1, 0);
  specs = mutateSpecs(ranges, MAX_LINES);
  why = `${Math.min(lines, MAX_LINES)} of the ${lines} lines ${commit} changed in ${files.length} product files`;
  if (!specs.length) why = `${commit} changed no product line: the default module`;
} catch (e) {
  why = `git could not say what HEAD~1..HEAD changed (${String(e).split('\n')[0]}): the default module`;
}
if (!specs.length) specs = [DEFAULT_MODULE];
writeFileSync(`${results}/mutation-smoke.txt`, `${why}\n${specs.join('\n')}\n`);
console.log(`mutation smoke (${why}): ${specs.join(', ')}`);

const args = [
  'stryker',
  'run',
  '--mutate',
  specs.join(','),
  // Its own incremental file, run whole: a developer's reports/mutation/ is left alone.
  '--incrementalFile',
  `${results}/mutation-smoke.incremental.json`,
  '--force',
  '--reporters',
  'clear-text,json',
];
// The JSON report's file name has no command-line flag: stryker.config.mjs reads it from the environment.
const child = spawn('npx', args, {
  stdio: 'inherit',
  env: { ...process.env, MMQ_MUTATION_JSON: `${results}/mutation-smoke.json` },
  // Its own process group, so the limit stops Stryker and the test runners it started together.
  detached: true,
});
const timer = setTimeout(() => {
  console.error(`mutation smoke: past its ${LIMIT_S} s limit (MMQ_MUTATE_LIMIT_S), stopped`);
  writeFileSync(`${results}/mutation-smoke.txt`, `${why}\n${specs.join('\n')}\nTIMEOUT ${LIMIT_S}\n`);
  process.kill(-child.pid!, 'SIGKILL');
}, LIMIT_S * 1000);
child.on('close', (code, signal) => {
  clearTimeout(timer);
  process.exit(code ?? (signal ? 124 : 1));
});
