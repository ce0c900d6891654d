// Pure view-model of a run's performance: per pass and for the plan, the batches' spread and where the
// median sits on the roofline of the adapter's measured peaks; the roofline's roofs and the tuner's
// configs as chart points. Kept out of the components so it is unit-tested without a DOM.
import type { Arm } from '../../kernels/gpu/caps';
import {
  peakOpsOf,
  roofOf,
  rooflinePoint,
  type Peaks,
  type RooflinePoint,
} from '../../kernels/perf/roofline';
import { spreadOf, type Spread } from '../../kernels/perf/spread';
import { totalTraffic } from '../../kernels/perf/traffic';
import type { RunOutcome, TuneRecordEntry } from '../../workers/protocol';

/** One row of the performance table: the plan or a pass. */
export interface PerfRow {
  label: string;
  kind: 'plan' | 'pass';
  spread: Spread;
  bytes: number;
  ops: number;
  /** On the roofline (the batches' median), when peaks are known. */
  point?: RooflinePoint;
}

/** The peaks a run is held to: the bandwidth and the compute roof of its arithmetic and arm. */
export function peaksFor(
  peaks: Peaks,
  arithmetic: 'int8' | 'f16',
  arm: Arm,
): { bandwidthGBs: number; ops?: number } {
  const ops = peakOpsOf(peaks, roofOf(arithmetic, arm));
  return { bandwidthGBs: peaks.bandwidthGBs, ...(ops !== undefined ? { ops } : {}) };
}

/**
 * The plan's row then one per pass (a one-pass plan has the plan's row only), from the run's timing and
 * traffic; undefined for an untimed run or one without traffic.
 * @example perfRows(outcome, probe.peaks)?.[0]?.point?.peakFraction
 */
export function perfRows(
  o: Pick<RunOutcome, 'timing' | 'traffic' | 'arithmetic' | 'config'>,
  peaks?: Peaks,
): PerfRow[] | undefined {
  const t = o.timing;
  const traffic = o.traffic;
  if (!t || !traffic?.length) return undefined;
  const roof = peaks ? peaksFor(peaks, o.arithmetic ?? 'int8', o.config.arm) : undefined;
  const row = (
    label: string,
    kind: PerfRow['kind'],
    samples: readonly number[],
    bytes: number,
    ops: number,
  ): PerfRow => {
    const spread = spreadOf(samples);
    return {
      label,
      kind,
      spread,
      bytes,
      ops,
      ...(roof && spread.median > 0
        ? { point: rooflinePoint({ label, ms: spread.median, bytes, ops }, roof.bandwidthGBs, roof.ops) }
        : {}),
    };
  };
  const total = totalTraffic(traffic);
  const rows = [row('whole plan', 'plan', t.samples, total.bytes, total.ops)];
  if (traffic.length > 1 && t.passes)
    t.passes.forEach((p, i) => {
      const tr = traffic[i];
      if (tr && p.samples.length) rows.push(row(`${i + 1}. ${p.label}`, 'pass', p.samples, tr.bytes, tr.ops));
    });
  return rows;
}

/**
 * The share of peak a point can claim, and against which roof: undefined without a point, and for work
 * with arithmetic whose arm has no measured compute roof (its bandwidth share alone would call a
 * compute-heavy run "memory-bound"). A pass that only moves data is held to the bandwidth.
 * @example honestPeak(row.point)?.fraction // 0.42
 */
export function honestPeak(
  point: RooflinePoint | undefined,
): { fraction: number; bound: RooflinePoint['bound'] } | undefined {
  if (!point || (point.ops > 0 && point.attainable === undefined)) return undefined;
  return { fraction: point.peakFraction, bound: point.bound };
}

/**
 * Why an arm has no compute roof, in words: the probe's own reason for the roof it skipped.
 * @example missingRoofText('f16', 'scalar', probe.skipped) // 'no f16-vector compute peak (no shader-f16 on this adapter)'
 */
export function missingRoofText(
  arithmetic: 'int8' | 'f16',
  arm: Arm,
  skipped: readonly { kind: string; why: string }[],
): string {
  const roof = roofOf(arithmetic, arm);
  const why = skipped.find((s) => s.kind === roof)?.why;
  return `no ${roof} compute peak${why ? ` (${why})` : ' was measured'}`;
}

/** A point of the roofline chart: intensity (ops/B) and ops/s, with what it is. */
export interface ChartPoint {
  x: number;
  y: number;
  label: string;
}

/** A point drawn at the edge of the plotted range because it lies outside it. */
export interface OutsidePoint extends ChartPoint {
  /** Its measured ops/s (y is the edge it is drawn on). */
  measuredY: number;
  side: 'below';
  series: 'run' | 'passes' | 'configs';
}

/** The roofline chart's series, or why there is none. */
export interface RooflineChartData {
  /** Why no roofline is drawn (a roof of the arm not measured); everything else is empty then. */
  missing?: string;
  /** The memory roof (intensity x bandwidth, up to the ridge) and the compute roof (flat from it). */
  memoryRoof: ChartPoint[];
  computeRoof: ChartPoint[];
  /** The roofs' names with their figures, for the legend. */
  names: { memory: string; compute: string };
  run: ChartPoint[];
  passes: ChartPoint[];
  configs: ChartPoint[];
  /** Points of any series below the plotted range, drawn on its lower edge and marked. */
  outside: OutsidePoint[];
  /** The plotted range (whole decades, log axes) and its decade ticks. */
  domain: { x: [number, number]; y: [number, number] };
  ticks: { x: number[]; y: number[] };
}

/** The plot spans at most this many decades of ops/s below its top: a point further down is marked. */
export const ROOFLINE_DECADES = 6;

const decadeBelow = (v: number) => 10 ** Math.floor(Math.log10(v));
const decadeAbove = (v: number) => 10 ** Math.ceil(Math.log10(v));
const decades = (lo: number, hi: number) => {
  const out: number[] = [];
  for (let e = Math.round(Math.log10(lo)); e <= Math.round(Math.log10(hi)); e++) out.push(10 ** e);
  return out;
};

const NO_CHART = {
  memoryRoof: [],
  computeRoof: [],
  names: { memory: '', compute: '' },
  run: [],
  passes: [],
  configs: [],
  outside: [],
  domain: { x: [1, 10] as [number, number], y: [1, 10] as [number, number] },
  ticks: { x: [], y: [] },
};

/**
 * The roofline of a run (or a sweep): the memory roof up to the ridge and the compute roof from it, each
 * named with its figure, over whole decades that hold every point, the ridge and the roofs; the run's plan
 * and passes (or a sweep's points, each a whole plan) (a pass without ops has no place on a log intensity
 * axis and is left to the table), and the tuner's measured configs that carry bytes. Points more than
 * ROOFLINE_DECADES below the top are drawn on the lower edge and listed in `outside`. Without a compute
 * roof for the arm there is no honest roofline: `missing` says so (with `why`, the probe's reason).
 * @example rooflineChart(rows, { bandwidthGBs: 10, ops: 1e12 }).names.compute // 'compute roof 1.00 T ops/s'
 */
export function rooflineChart(
  rows: readonly Pick<PerfRow, 'label' | 'kind' | 'point'>[],
  roof: { bandwidthGBs: number; ops?: number },
  tuned: readonly Pick<TuneRecordEntry, 'ms' | 'bytes' | 'verdict' | 'config' | 'label'>[] = [],
  tunedOps = 0,
  why?: string,
): RooflineChartData {
  const peak = roof.ops;
  if (peak === undefined || !(peak > 0) || !(roof.bandwidthGBs > 0))
    return {
      ...NO_CHART,
      missing: `No roofline: ${why ?? 'no compute peak was measured for this arm'}. A roofline needs both roofs measured for the arm; the table has the bandwidth.`,
    };
  const at = (r: Pick<PerfRow, 'label' | 'point'>): ChartPoint | undefined =>
    r.point && r.point.intensity > 0 && r.point.opsPerSec > 0
      ? { x: r.point.intensity, y: r.point.opsPerSec, label: r.label }
      : undefined;
  const run = rows.filter((r) => r.kind === 'plan').flatMap((r) => at(r) ?? []);
  const passes = rows.filter((r) => r.kind === 'pass').flatMap((r) => at(r) ?? []);
  const configs = tuned.flatMap((e) =>
    e.verdict === 'measured' && e.bytes && tunedOps > 0 && Number.isFinite(e.ms) && e.ms > 0
      ? [{ x: tunedOps / e.bytes, y: tunedOps / (e.ms / 1e3), label: e.label ?? e.config }]
      : [],
  );
  const points = [...run, ...passes, ...configs];
  const bw = roof.bandwidthGBs * 1e9;
  const ridge = peak / bw;
  const xs = [...points.map((p) => p.x), ridge];
  const x: [number, number] = [decadeBelow(Math.min(...xs) / 2), decadeAbove(Math.max(...xs) * 2)];
  const yTop = decadeAbove(Math.max(peak, ...points.map((p) => p.y)) * 1.5);
  const yLow = Math.max(
    decadeBelow(Math.min(x[0] * bw, ...points.map((p) => p.y))),
    yTop / 10 ** ROOFLINE_DECADES,
  );
  const y: [number, number] = [yLow, yTop];
  // The memory roof enters the plot at its left edge, or at its bottom edge where that is higher.
  const memoryStart = Math.max(x[0], y[0] / bw);
  const memoryRoof =
    memoryStart < ridge
      ? [
          { x: memoryStart, y: memoryStart * bw, label: 'memory roof' },
          { x: ridge, y: peak, label: 'ridge' },
        ]
      : [];
  const computeRoof = [
    { x: Math.max(ridge, x[0]), y: peak, label: 'compute roof' },
    { x: x[1], y: peak, label: 'compute roof' },
  ];
  const inside = (p: ChartPoint) => p.y >= y[0];
  const bySeries = { run, passes, configs };
  const outside = (['run', 'passes', 'configs'] as const).flatMap((series) =>
    bySeries[series]
      .filter((p) => !inside(p))
      .map((p): OutsidePoint => ({ ...p, y: y[0], measuredY: p.y, side: 'below', series })),
  );
  return {
    memoryRoof,
    computeRoof,
    names: {
      memory: `memory roof ${roof.bandwidthGBs.toPrecision(3)} GB/s`,
      compute: `compute roof ${si(peak)} ops/s`,
    },
    run: run.filter(inside),
    passes: passes.filter(inside),
    configs: configs.filter(inside),
    outside,
    domain: { x, y },
    ticks: { x: decades(...x), y: decades(...y) },
  };
}

/** A fraction as a percentage of three significant digits ('41.7%'), '–' when there is none. */
export const percent = (f: number | undefined): string =>
  f === undefined ? '–' : `${(f * 100).toPrecision(3)}%`;

/** A rate with an SI prefix from mega up: 1.23 T, 456 G, 7.8 M, 12.0. */
export function si(v: number): string {
  const units: [number, string][] = [
    [1e12, 'T'],
    [1e9, 'G'],
    [1e6, 'M'],
  ];
  for (const [f, u] of units) if (Math.abs(v) >= f) return `${(v / f).toPrecision(3)} ${u}`;
  return v.toPrecision(3);
}
