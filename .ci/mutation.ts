// Reading StrykerJS's JSON report (stryker.config.mjs writes reports/mutation/mutation.json): the mutation
// score per area of the code, the mutants no test killed, and which changed files CI's smoke mutates. The
// printing is in ./mutationScore.ts and ./mutationSmoke.ts; test/ciSummary.test.ts tests this module.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** What CI reads of stryker.config.mjs: the globs it mutates and the score under which a run fails. */
export interface StrykerSettings {
  mutate: string[];
  /** thresholds.break: a run scoring under it fails (null: none yet). */
  breakAt: number | null;
}

/**
 * Read stryker.config.mjs under `root` (a JavaScript module, imported by path so TypeScript does not type it).
 * @example (await readStrykerSettings(process.cwd())).mutate[0] // 'src/kernels/quant/**\/*.ts'
 */
export async function readStrykerSettings(root: string): Promise<StrykerSettings> {
  const url = pathToFileURL(join(root, 'stryker.config.mjs')).href;
  const mod: unknown = await import(url);
  const config = (mod as { default?: { mutate?: unknown; thresholds?: { break?: unknown } } }).default;
  const mutate = config?.mutate;
  if (!Array.isArray(mutate) || !mutate.every((g): g is string => typeof g === 'string'))
    throw new Error('stryker.config.mjs has no mutate list of globs');
  const breakAt = config?.thresholds?.break;
  return { mutate, breakAt: typeof breakAt === 'number' ? breakAt : null };
}

/** A mutant as the mutation-testing-report schema gives it, the fields read here. */
export interface Mutant {
  mutatorName: string;
  status: string;
  replacement?: string;
  location: { start: { line: number; column: number } };
}

/** Stryker's JSON report, the fields read here: mutants by file, paths relative to the project root. */
export interface MutationReport {
  files: Record<string, { mutants: Mutant[] }>;
}

export const isMutationReport = (x: unknown): x is MutationReport =>
  typeof x === 'object' &&
  x !== null &&
  typeof (x as { files?: unknown }).files === 'object' &&
  (x as { files?: unknown }).files !== null;

/** Counts by outcome, and the score they make. */
export interface Score {
  files: number;
  killed: number;
  timeout: number;
  survived: number;
  noCoverage: number;
  /** Mutants that did not compile or crashed the runner: counted in neither side of the score. */
  errors: number;
  /** (killed + timeout) / (killed + timeout + survived + noCoverage), in percent; NaN with no mutant. */
  score: number;
}

/**
 * The area a file's score is counted in: each folder of src/kernels (quant, perf, tune, models, gpu and one
 * per family), the shared files of src/kernels, app logic, workers, cli.
 * @example areaOf('src/kernels/mmq/mmq.plan.ts') // 'kernels/mmq'
 */
export function areaOf(path: string): string {
  const p = path.replaceAll('\\', '/');
  const kernels = /^src\/kernels\/([^/]+)\//.exec(p);
  if (kernels) return `kernels/${kernels[1]}`;
  if (p.startsWith('src/kernels/')) return 'kernels (shared)';
  if (p.startsWith('src/app/')) return 'app logic';
  if (p.startsWith('src/workers/')) return 'workers';
  if (p.startsWith('cli/')) return 'cli';
  return 'other';
}

/** Count `mutants` of `files` files into a Score. */
function scoreOf(files: number, mutants: readonly Mutant[]): Score {
  const n = (...statuses: string[]) => mutants.filter((m) => statuses.includes(m.status)).length;
  const s = {
    files,
    killed: n('Killed'),
    timeout: n('Timeout'),
    survived: n('Survived'),
    noCoverage: n('NoCoverage'),
    errors: n('CompileError', 'RuntimeError'),
  };
  const detected = s.killed + s.timeout;
  const valid = detected + s.survived + s.noCoverage;
  return { ...s, score: valid ? (100 * detected) / valid : NaN };
}

/**
 * The score of each area with mutants in the report (sorted by area), and of all of them.
 * @example scoreByArea(report).get('kernels/perf')?.score // 90.4
 */
export function scoreByArea(report: MutationReport): Map<string, Score> {
  const byArea = new Map<string, { files: number; mutants: Mutant[] }>();
  for (const [path, { mutants }] of Object.entries(report.files)) {
    const area = byArea.get(areaOf(path)) ?? { files: 0, mutants: [] };
    area.files++;
    area.mutants.push(...mutants);
    byArea.set(areaOf(path), area);
  }
  const out = new Map<string, Score>();
  for (const area of [...byArea.keys()].sort()) {
    const { files, mutants } = byArea.get(area)!;
    out.set(area, scoreOf(files, mutants));
  }
  const all = Object.values(report.files);
  out.set(
    'all',
    scoreOf(
      all.length,
      all.flatMap((f) => f.mutants),
    ),
  );
  return out;
}

/** A score as a percentage with one decimal, or 'n/a' when there was nothing to score. */
export const percent = (score: number): string => (Number.isNaN(score) ? 'n/a' : `${score.toFixed(1)}%`);

/**
 * The table mutationScore.ts prints: one row per area, then all.
 * @example scoreTable(scoreByArea(report))[0] // 'area              files  mutants  killed ...'
 */
export function scoreTable(scores: ReadonlyMap<string, Score>): string[] {
  const head = ['area', 'files', 'killed', 'timeout', 'survived', 'no cov', 'errors', 'score'];
  const rows = [...scores].map(([area, s]) => [
    area,
    String(s.files),
    String(s.killed),
    String(s.timeout),
    String(s.survived),
    String(s.noCoverage),
    String(s.errors),
    percent(s.score),
  ]);
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [head, ...rows].map((r) =>
    r.map((cell, i) => (i === 0 ? cell.padEnd(width[i]!) : cell.padStart(width[i]!))).join('  '),
  );
}

/**
 * The mutants no test killed (survived, or run by no test), as `file:line:column mutator -> replacement`.
 * @example survivors(report) // ['src/kernels/perf/spread.ts:28:51 ArithmeticOperator -> n + 1', ...]
 */
export function survivors(report: MutationReport): string[] {
  return Object.entries(report.files).flatMap(([path, { mutants }]) =>
    mutants
      .filter((m) => m.status === 'Survived' || m.status === 'NoCoverage')
      .map(
        (m) =>
          `${path}:${m.location.start.line}:${m.location.start.column} ${m.status === 'NoCoverage' ? '(no test) ' : ''}${m.mutatorName}` +
          (m.replacement !== undefined ? ` -> ${m.replacement.replace(/\s+/g, ' ').slice(0, 80)}` : ''),
      ),
  );
}

/**
 * A glob of stryker.config.mjs's `mutate` list as a RegExp: `**` any folders, `*` within one name,
 * `{a,b}` either.
 * @example globRegExp('src/kernels/*\/*.{plan,oracle}.ts').test('src/kernels/mmq/mmq.plan.ts') // true
 */
export function globRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      // `**/` matches no folder or any number of them.
      re += glob[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += glob[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '{') re += '(?:';
    else if (c === '}') re += ')';
    else if (c === ',') re += '|';
    else re += c.replace(/[.+^$()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/**
 * The files of `changed` that `mutate` (globs, `!` ones excluding) selects, in the order given.
 * @example mutatedOf(['src/kernels/perf/spread.ts', 'README.md'], ['src/kernels/perf/**\/*.ts']) // ['src/kernels/perf/spread.ts']
 */
export function mutatedOf(changed: readonly string[], mutate: readonly string[]): string[] {
  const include = mutate.filter((g) => !g.startsWith('!')).map(globRegExp);
  const exclude = mutate.filter((g) => g.startsWith('!')).map((g) => globRegExp(g.slice(1)));
  return changed.filter((f) => include.some((r) => r.test(f)) && !exclude.some((r) => r.test(f)));
}

/** Lines a commit added or changed in one file, first to last, inclusive. */
export interface LineRange {
  file: string;
  from: number;
  to: number;
}

/**
 * The added or changed lines of a `git diff -U0` (new-side line numbers), by file; pure deletions add none.
 * @example changedRanges('+++ b/cli/args.ts\n@@ -10,2 +10,3 @@\n') // [{ file: 'cli/args.ts', from: 10, to: 12 }]
 */
export function changedRanges(diff: string): LineRange[] {
  const out: LineRange[] = [];
  let file: string | undefined;
  for (const line of diff.split('\n')) {
    const name = /^\+\+\+ (?:b\/(.*)|\/dev\/null)$/.exec(line);
    if (name) file = name[1];
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (hunk && file) {
      const from = Number(hunk[1]);
      const count = hunk[2] === undefined ? 1 : Number(hunk[2]);
      if (count > 0) out.push({ file, from, to: from + count - 1 });
    }
  }
  return out;
}

/**
 * At most `maxLines` changed lines, in the order given (a range that would pass it is cut short), as
 * Stryker's `--mutate` entries (`file:from-to`).
 * @example mutateSpecs([{ file: 'cli/args.ts', from: 10, to: 12 }], 100) // ['cli/args.ts:10-12']
 */
export function mutateSpecs(ranges: readonly LineRange[], maxLines: number): string[] {
  const out: string[] = [];
  let left = maxLines;
  for (const r of ranges) {
    if (left <= 0) break;
    const to = Math.min(r.to, r.from + left - 1);
    out.push(`${r.file}:${r.from}-${to}`);
    left -= to - r.from + 1;
  }
  return out;
}
