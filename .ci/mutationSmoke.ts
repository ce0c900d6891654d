// CI's small StrykerJS run (.ci/run's `mutate` tier), so mutation testing stays a habit: the product files
// the last commit changed (git diff HEAD~1, filtered by stryker.config.mjs's `mutate` list, at most
// MAX_FILES of them), or one small module when it changed none. It writes Stryker's JSON report to
// .test-results/mutation-smoke.json and what it chose, and why, to .test-results/mutation-smoke.txt;
// .ci/verdict.ts reads both. It exits non-zero when Stryker could not run (its initial test run failed, a
// bad config) or ran past its time limit, so CI fails; the score itself fails CI only under the `break`
// threshold of stryker.config.mjs.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { mutatedOf, readStrykerSettings } from './mutation';

/** At most this many changed files are mutated: the smoke is a habit, not the campaign. */
export const MAX_FILES = 3;
/** The module mutated when the commit changed none (small, its tests fast). */
export const DEFAULT_MODULE = 'src/kernels/tune/rounds.ts';
/** Stryker's whole run is stopped past this (MMQ_MUTATE_LIMIT_S), and the tier fails. */
const LIMIT_S = Number(process.env.MMQ_MUTATE_LIMIT_S) || 360;

const results = '.test-results';
mkdirSync(results, { recursive: true });

let changed: string[] = [];
let why: string;
try {
  changed = execFileSync('git', ['diff', '--name-only', 'HEAD~1', 'HEAD'], { encoding: 'utf8' })
    .split('\n')
    .filter((f) => f && existsSync(f));
  why = `changed by ${execFileSync('git', ['log', '-1', '--format=%h', 'HEAD'], { encoding: 'utf8' }).trim()}`;
} catch {
  why = 'git could not diff HEAD~1';
}
const { mutate } = await readStrykerSettings(process.cwd());
let files = mutatedOf(changed, mutate).slice(0, MAX_FILES);
if (!files.length) {
  files = [DEFAULT_MODULE];
  why = `no product file ${why.startsWith('changed') ? why : `(${why})`}: the default module`;
}
writeFileSync(`${results}/mutation-smoke.txt`, `${why}\n${files.join('\n')}\n`);
console.log(`mutation smoke (${why}): ${files.join(', ')}`);

const args = [
  'stryker',
  'run',
  '--mutate',
  files.join(','),
  '--incrementalFile',
  `${results}/mutation-smoke.incremental.json`,
  '--force',
  '--reporters',
  'clear-text,json',
  '--tempDirName',
  '.stryker-tmp-smoke',
];
// The JSON reporter's file name has no command-line flag: Stryker reads it from this environment variable
// through stryker.config.mjs.
const child = spawn('npx', args, {
  stdio: 'inherit',
  env: { ...process.env, MMQ_MUTATION_JSON: `${results}/mutation-smoke.json` },
  detached: true,
});
const timer = setTimeout(() => {
  console.error(`mutation smoke: past its ${LIMIT_S} s limit (MMQ_MUTATE_LIMIT_S), stopped`);
  writeFileSync(`${results}/mutation-smoke.txt`, `${why}\n${files.join('\n')}\nTIMEOUT ${LIMIT_S}\n`);
  // Stryker and the test runners it started, as one process group.
  process.kill(-child.pid!, 'SIGKILL');
}, LIMIT_S * 1000);
child.on('close', (code, signal) => {
  clearTimeout(timer);
  process.exit(code ?? (signal ? 124 : 1));
});
