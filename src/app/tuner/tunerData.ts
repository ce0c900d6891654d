// Pure view-model of a tune report for the dashboard: chart series, table sorting and number formats.
// Kept out of the components so it is unit-tested without a DOM.
import type { TuneRecordEntry, TuneReport, TuneVerdict } from '../../workers/protocol';
export { finalsWallMs } from '../../kernels/tune/finals';
export interface ConvergencePoint {
  generation: number;
  /** Best ms found up to this generation; null before anything passed (recharts leaves a gap). */
  best: number | null;
}

/** Best ms per generation (cumulative), from the report or, while a hunt runs, from its entries. */
export function convergenceSeries(report: Pick<TuneReport, 'bestPerGeneration'>): ConvergencePoint[] {
  return report.bestPerGeneration.map((ms, generation) => ({
    generation,
    best: Number.isFinite(ms) ? ms : null,
  }));
}

/** Cumulative best per generation from entries as they stream in (live convergence). */
export function bestPerGenerationOf(entries: readonly TuneRecordEntry[]): number[] {
  const gens = entries.reduce((g, e) => Math.max(g, e.generation + 1), 0);
  const out: number[] = [];
  let best = Infinity;
  for (let g = 0; g < gens; g++) {
    for (const e of entries) if (e.generation === g && e.verdict === 'measured') best = Math.min(best, e.ms);
    out.push(best);
  }
  return out;
}

export interface ScatterPoint {
  /** BM*BN, the output block area. */
  area: number;
  /** ms for measured configs; the "not measured" row's y for the others. */
  y: number;
  ms: number;
  config: string;
  verdict: TuneVerdict;
  winner: boolean;
  entry: TuneRecordEntry;
}

export interface ScatterModel {
  measured: ScatterPoint[];
  failedGate: ScatterPoint[];
  rejected: ScatterPoint[];
  winner: ScatterPoint | undefined;
  /** y of the separate row where unmeasured configs sit (their ms is Infinity), above every measured one. */
  unmeasuredY: number;
  /** y of the dashed line separating that row from the measured points. */
  dividerY: number;
  yMax: number;
  xDomain: [number, number];
  /** Log-axis ticks: powers of 4 covering the areas present. */
  xTicks: number[];
}

/** BM*BN of an entry (a family without an output tile counts as one 16x16 block). */
export const areaOf = (e: TuneRecordEntry): number => (e.bm ?? 16) * (e.bn ?? 16);

/** Every evaluated config as a point: BM*BN vs ms, unmeasured ones on their own row at the top. */
export function scatterModel(entries: readonly TuneRecordEntry[], winner: string): ScatterModel {
  const finite = entries.filter((e) => e.verdict === 'measured');
  const maxMs = finite.reduce((m, e) => Math.max(m, e.ms), 0);
  const top = maxMs > 0 ? maxMs : 1;
  const unmeasuredY = top * 1.25;
  const point = (e: TuneRecordEntry): ScatterPoint => ({
    area: areaOf(e),
    y: e.verdict === 'measured' ? e.ms : unmeasuredY,
    ms: e.ms,
    config: e.config,
    verdict: e.verdict,
    winner: e.config === winner && e.verdict === 'measured',
    entry: e,
  });
  const all = entries.map(point);
  const areas = all.map((p) => p.area);
  const lo = areas.length ? Math.min(...areas) : 256;
  const hi = areas.length ? Math.max(...areas) : 65536;
  return {
    measured: all.filter((p) => p.verdict === 'measured' && !p.winner),
    failedGate: all.filter((p) => p.verdict === 'failed-gate'),
    rejected: all.filter((p) => p.verdict === 'rejected'),
    winner: all.find((p) => p.winner),
    unmeasuredY,
    dividerY: top * 1.12,
    yMax: top * 1.35,
    xDomain: [lo / 1.6, hi * 1.6],
    xTicks: log4Ticks(lo, hi),
  };
}

/** Powers of 4 from the one at or below `lo` to the one at or above `hi`. */
export function log4Ticks(lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let t = 4 ** Math.floor(Math.log(Math.max(1, lo)) / Math.log(4)); t <= hi * 4; t *= 4) {
    out.push(t);
    if (t >= hi) break;
  }
  return out;
}

/** 256, 1k, 16k: a compact count. */
export function formatCount(v: number): string {
  return v >= 1024 ? `${Math.round(v / 1024)}k` : String(Math.round(v));
}

export type SortKey = 'ms' | 'order' | 'area' | 'generation' | 'worstRel';
export type SortDir = 'asc' | 'desc';

export interface TableRow {
  /** Evaluation order (0-based). */
  order: number;
  entry: TuneRecordEntry;
}

/**
 * Entries sorted for the table. By ms, unmeasured configs (ms Infinity) always come after measured
 * ones, gate failures before static rejections; ties keep evaluation order.
 */
export function sortRows(entries: readonly TuneRecordEntry[], key: SortKey, dir: SortDir): TableRow[] {
  const rows = entries.map((entry, order) => ({ order, entry }));
  const sign = dir === 'asc' ? 1 : -1;
  const rank = (v: TuneVerdict) => (v === 'measured' ? 0 : v === 'failed-gate' ? 1 : 2);
  const value = (r: TableRow): number => {
    switch (key) {
      case 'ms':
        return r.entry.ms;
      case 'order':
        return r.order;
      case 'area':
        return areaOf(r.entry);
      case 'generation':
        return r.entry.generation;
      case 'worstRel':
        return r.entry.worstRel ?? -1;
    }
  };
  return rows.sort((a, b) => {
    if (key === 'ms') {
      const ra = rank(a.entry.verdict);
      const rb = rank(b.entry.verdict);
      if (ra !== rb) return ra - rb;
    }
    const d = value(a) - value(b);
    return (Number.isNaN(d) ? 0 : d) * sign || a.order - b.order;
  });
}

/** "0.123 ms", "12.3 us", "--" for Infinity. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '--';
  if (ms === 0) return '0';
  if (ms < 0.1) return `${(ms * 1000).toFixed(ms < 0.01 ? 2 : 1)} us`;
  if (ms < 10) return `${ms.toFixed(3)} ms`;
  return `${ms.toFixed(1)} ms`;
}

/** A relative error as "1.2e-7", "--" when absent. */
export function formatRel(rel: number | undefined): string {
  if (rel === undefined) return '--';
  if (!Number.isFinite(rel)) return 'inf';
  return rel === 0 ? '0' : rel.toExponential(1);
}

/**
 * Speedup of the winner over the incumbent ("1.83x"), when both were measured. A report with an
 * interleaved claim says what the claim says: a ratio only when the rounds did not overlap.
 */
export function speedup(report: Pick<TuneReport, 'bestMs' | 'incumbentMs' | 'claim'>): string | undefined {
  const c = report.claim;
  if (c)
    return c.verdict === 'faster'
      ? `${c.ratio.toFixed(2)}x, interleaved rounds do not overlap`
      : c.verdict === 'slower'
        ? `the incumbent stayed ${(1 / c.ratio).toFixed(2)}x faster`
        : `no measurable difference over ${c.a.n} interleaved rounds`;
  const inc = report.incumbentMs;
  if (inc === undefined || !Number.isFinite(inc) || !Number.isFinite(report.bestMs) || report.bestMs <= 0)
    return undefined;
  return `${(inc / report.bestMs).toFixed(2)}x`;
}

/**
 * A hunt's incumbent: its first entry. The worker seeds generation 0 with the incumbent first
 * (workers/tune/handler.ts), so every hunt's report starts with it; undefined for a report without one.
 */
export function incumbentOf(report: Pick<TuneReport, 'entries'>): string | undefined {
  const first = report.entries[0];
  return first?.generation === 0 ? first.config : undefined;
}

/** A hunt's outcome in words, for the summary line: one that never contradicts itself. */
export interface HuntSummary {
  /**
   * 'challenger': a config beat the incumbent; 'incumbent': the incumbent is the winner; 'unproven': a
   * run hunted before a pick had to beat the incumbent measurably, whose pick did not; 'none': nothing
   * passed the gate.
   */
  kind: 'challenger' | 'incumbent' | 'unproven' | 'none';
  /** What the winner is called ("winner", "winner: the incumbent", "pick"). */
  label: string;
  /** What was found against the incumbent; never a ratio when the winner is the incumbent. */
  versus?: string;
}

const range = (s: { median: number; min: number; max: number }) =>
  `${formatMs(s.median)} [${formatMs(s.min)}–${formatMs(s.max)}]`;

/**
 * The summary of a report: the winner, and against the incumbent what the deciding measurement showed
 * (the interleaved claim, else the finalists' median re-timings). A winner that is the incumbent is said
 * to be so, without a ratio; a pick not measurably faster than the incumbent is not called a winner.
 * @example huntSummary(report) // { kind: 'challenger', label: 'winner', versus: 'incumbent 1.500 ms: 1.25x faster, ...' }
 */
export function huntSummary(
  report: Pick<TuneReport, 'winner' | 'bestMs' | 'incumbentMs' | 'claim' | 'entries'>,
): HuntSummary {
  if (!report.winner) return { kind: 'none', label: 'no winner' };
  const incumbent = incumbentOf(report);
  const c = report.claim;
  const inc = report.incumbentMs;
  if (report.winner === incumbent)
    return {
      kind: 'incumbent',
      label: 'winner: the incumbent',
      versus: c
        ? `no finalist was measurably faster (the best, ${range(c.b)}, against the incumbent's ${range(c.a)} over ${c.a.n} interleaved rounds)`
        : 'no config was faster than it',
    };
  if (c)
    return c.verdict === 'faster'
      ? {
          kind: 'challenger',
          label: 'winner',
          versus: `incumbent ${formatMs(c.a.median)}: ${speedup(report)}`,
        }
      : {
          kind: 'unproven',
          label: 'pick',
          versus: `not measurably faster than the incumbent (${range(c.b)} against ${range(c.a)} over ${c.a.n} interleaved rounds); hunted before a pick had to be: hunt again`,
        };
  if (inc === undefined || !Number.isFinite(inc))
    return { kind: 'challenger', label: 'winner', versus: 'the incumbent was not measured' };
  return report.bestMs < inc
    ? {
        kind: 'challenger',
        label: 'winner',
        versus: `incumbent ${formatMs(inc)}: ${(inc / report.bestMs).toFixed(2)}x faster by the finalists' median re-timings`,
      }
    : {
        kind: 'unproven',
        label: 'pick',
        versus: `not faster than the incumbent (${formatMs(inc)}); hunted before a pick had to be: hunt again`,
      };
}
