// How steady a bench run's timings were, from its JSON alone: within each row (its batches, `msSamples`) and
// between runs (the same config at the same shape in two sets of commands). The timing figures of
// docs/decisions/0006-timing-method.md (rows whose batches disagreed, slow batches first, what the median of
// three would have reported, whole rows slow in one command) are this tool's output.
//
//   npx tsx bench/stability.ts run1.json [run2.json ...] [--against old1.json ...]
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { eachFlag } from './args';
import { BATCH_SPREAD_LIMIT, batchesAgree } from './exec';
import { rowShape, type BenchRow } from './harness';

/** A row slower than this factor (median of three against fastest, or one run against another) counts. */
export const SLOWER = 1.05;
/** Two runs of a config within this factor count as the same time. */
export const SAME = 1.03;

const median3 = (s: readonly number[]): number =>
  [...s.slice(0, 3)].sort((a, b) => a - b)[Math.min(1, s.length - 1)]!;

export interface BatchStats {
  /** Rows with at least two timed batches. */
  rows: number;
  /** Rows whose batches disagreed (slowest > BATCH_SPREAD_LIMIT x fastest). */
  disagreed: number;
  /** Of those, rows whose slow batches all came first: after the first batch within the limit of the
   * fastest, every later one is too. */
  slowFirst: number;
  /** The most slow batches before the first fast one, over those rows. */
  longestSlowPrefix: number;
  /** Rows the median of their first three batches (the bench's rule before commit 3dcda30) would have reported
   * more than SLOWER x their fastest, and the range of that factor. */
  median3Slower: number;
  median3Range?: [number, number];
}

/** Within-row statistics of the timed rows (rows without `msSamples`, or with one batch, are left out). */
export function batchStats(rows: readonly BenchRow[]): BatchStats {
  const st: BatchStats = { rows: 0, disagreed: 0, slowFirst: 0, longestSlowPrefix: 0, median3Slower: 0 };
  let lo = Infinity;
  let hi = 0;
  for (const r of rows) {
    const s = r.msSamples;
    if (!s || s.length < 2) continue;
    st.rows++;
    const fastest = Math.min(...s);
    const fast = (v: number) => v <= BATCH_SPREAD_LIMIT * fastest;
    if (!batchesAgree(s)) {
      st.disagreed++;
      const firstFast = s.findIndex(fast);
      if (firstFast > 0 && s.slice(firstFast).every(fast)) {
        st.slowFirst++;
        st.longestSlowPrefix = Math.max(st.longestSlowPrefix, firstFast);
      }
    }
    const f = median3(s) / fastest;
    if (f > SLOWER) {
      st.median3Slower++;
      lo = Math.min(lo, f);
      hi = Math.max(hi, f);
    }
  }
  if (st.median3Slower) st.median3Range = [lo, hi];
  return st;
}

const rowKey = (r: BenchRow) => `${r.id} ${rowShape(r)}`;

export interface SlowSide {
  /** Rows this side took more than BATCH_SPREAD_LIMIT x the other side's time. */
  rows: number;
  /** Of those, rows whose own batches agreed: the slow phase outlasted the row. */
  agreed: number;
  /** The range of this side's time over the other's. */
  range?: [number, number];
  /** The rows (key, this side's ms, the other's). */
  examples: { key: string; ms: number; otherMs: number }[];
}

export interface RunComparison {
  /** Timed, passing rows present in both (by config id and shape; the first occurrence in each). */
  common: number;
  /** Within SAME of each other. */
  same: number;
  /** Rows slower in `a`, and rows slower in `b`. */
  slowerInA: SlowSide;
  slowerInB: SlowSide;
}

function byKey(rows: readonly BenchRow[]): Map<string, BenchRow> {
  const m = new Map<string, BenchRow>();
  for (const r of rows)
    if (r.ms !== undefined && r.correctness?.pass && !m.has(rowKey(r))) m.set(rowKey(r), r);
  return m;
}

function slowSide(): SlowSide {
  return { rows: 0, agreed: 0, examples: [] };
}

function addSlow(side: SlowSide, key: string, slow: BenchRow, other: BenchRow) {
  const f = slow.ms! / other.ms!;
  side.rows++;
  if (slow.msSamples && slow.msSamples.length > 1 && batchesAgree(slow.msSamples)) side.agreed++;
  side.range = side.range ? [Math.min(side.range[0], f), Math.max(side.range[1], f)] : [f, f];
  side.examples.push({ key, ms: slow.ms!, otherMs: other.ms! });
}

/** The same configs at the same shapes in two sets of runs. */
export function compareRuns(a: readonly BenchRow[], b: readonly BenchRow[]): RunComparison {
  const ma = byKey(a);
  const mb = byKey(b);
  const out: RunComparison = { common: 0, same: 0, slowerInA: slowSide(), slowerInB: slowSide() };
  for (const [key, ra] of ma) {
    const rb = mb.get(key);
    if (!rb) continue;
    out.common++;
    const f = ra.ms! / rb.ms!;
    if (f <= SAME && f >= 1 / SAME) out.same++;
    if (f > BATCH_SPREAD_LIMIT) addSlow(out.slowerInA, key, ra, rb);
    else if (f < 1 / BATCH_SPREAD_LIMIT) addSlow(out.slowerInB, key, rb, ra);
  }
  return out;
}

const range = (r?: [number, number]) => (r ? `${r[0].toFixed(2)}-${r[1].toFixed(2)}x` : '-');

function readRows(files: readonly string[]): BenchRow[] {
  return files.flatMap((f) => (JSON.parse(readFileSync(f, 'utf8')) as { rows: BenchRow[] }).rows);
}

function main(argv: string[]) {
  const runs: string[] = [];
  const against: string[] = [];
  let target = runs;
  eachFlag(argv, (a) => {
    if (a === '--against') target = against;
    else if (a.startsWith('--')) throw new Error(`unknown argument ${a}`);
    else target.push(a);
  });
  if (!runs.length) throw new Error('usage: tsx bench/stability.ts run.json... [--against old.json...]');
  const rows = readRows(runs);
  const st = batchStats(rows);
  console.log(
    `${st.rows} timed rows; ${st.disagreed} with batches more than ${BATCH_SPREAD_LIMIT}x apart, ` +
      `${st.slowFirst} of them slow first (at most ${st.longestSlowPrefix} slow batches before a fast one); ` +
      `the median of the first three would report ${st.median3Slower} rows ${range(st.median3Range)} slower`,
  );
  if (!against.length) return;
  const c = compareRuns(rows, readRows(against));
  console.log(`${c.common} rows in both sets; ${c.same} within ${SAME}x of each other`);
  for (const [name, side] of [
    ['these runs', c.slowerInA],
    ['--against', c.slowerInB],
  ] as const) {
    console.log(
      `slower in ${name}: ${side.rows} rows (${range(side.range)}), ${side.agreed} of them with every batch agreeing`,
    );
    for (const e of side.examples)
      console.log(`  ${e.key.padEnd(90)} ${e.ms.toFixed(4)} ms against ${e.otherMs.toFixed(4)}`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
