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

/** A point of the roofline chart: intensity (ops/B) and ops/s, with what it is. */
export interface ChartPoint {
  x: number;
  y: number;
  label: string;
}

/** The roofline chart's series: the roofs' polyline, the run (or a sweep's points), its passes, the tuner's configs. */
export interface RooflineChartData {
  roofs: ChartPoint[];
  run: ChartPoint[];
  passes: ChartPoint[];
  configs: ChartPoint[];
}

/**
 * The roofs as a polyline over [xMin, xMax] (the memory slope to the ridge, then the compute roof) and
 * the points: the run's plan and passes (or a sweep's points, each a whole plan) (a pass without ops has no place on a log intensity axis and is
 * left to the table), and the tuner's measured configs that carry bytes.
 */
export function rooflineChart(
  rows: readonly Pick<PerfRow, 'label' | 'kind' | 'point'>[],
  roof: { bandwidthGBs: number; ops?: number },
  tuned: readonly Pick<TuneRecordEntry, 'ms' | 'bytes' | 'verdict' | 'config' | 'label'>[] = [],
  tunedOps = 0,
): RooflineChartData {
  const at = (r: Pick<PerfRow, 'label' | 'point'>): ChartPoint | undefined =>
    r.point && r.point.intensity > 0
      ? { x: r.point.intensity, y: r.point.opsPerSec, label: r.label }
      : undefined;
  const run = rows.filter((r) => r.kind === 'plan').flatMap((r) => at(r) ?? []);
  const passes = rows.filter((r) => r.kind === 'pass').flatMap((r) => at(r) ?? []);
  const configs = tuned.flatMap((e) =>
    e.verdict === 'measured' && e.bytes && tunedOps > 0 && Number.isFinite(e.ms)
      ? [{ x: tunedOps / e.bytes, y: tunedOps / (e.ms / 1e3), label: e.label ?? e.config }]
      : [],
  );
  const xs = [...run, ...passes, ...configs].map((p) => p.x);
  const bw = roof.bandwidthGBs * 1e9;
  const ridge = roof.ops !== undefined ? roof.ops / bw : undefined;
  const xMin = Math.min(...xs, ridge ?? Infinity, 1) / 4;
  const xMax = Math.max(...xs, ridge ?? 0, 1) * 4;
  const y = (x: number) => Math.min(roof.ops ?? Infinity, x * bw);
  const roofXs = ridge !== undefined && ridge > xMin && ridge < xMax ? [xMin, ridge, xMax] : [xMin, xMax];
  return { roofs: roofXs.map((x) => ({ x, y: y(x), label: 'roof' })), run, passes, configs };
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
