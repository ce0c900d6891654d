// Pure view-model of a shape sweep's performance: what each finished point keeps of its run (timing,
// throughput, and the bytes, ops, arithmetic and arm the roofline needs), and from a stored point its
// GB/s, intensity and % of peak at the batches' median (as the run's performance panel has it), the
// chart's rows, and the roofline's points. Stored points from before sweeps kept bytes and ops, points
// that did not finish and points with figures that cannot be plotted are left out, never thrown on.
import type { Arm } from '../../kernels/gpu/caps';
import { rooflinePoint, type Peaks, type RooflinePoint } from '../../kernels/perf/roofline';
import { totalTraffic } from '../../kernels/perf/traffic';
import type { RunOutcome } from '../../workers/protocol';
import type { SweepPoint, SweepRecord } from '../store/sweep';
import { batchStats } from '../views/abCompare';
import { honestPeak, peaksFor, type PerfRow } from './perfView';

/**
 * A finished run as the sweep keeps it: the batches' fastest and median ms, the throughput, the verdict,
 * and the whole plan's bytes and ops with the arithmetic and arm (what % of peak is computed from).
 * @example sweepPointOf(64, msg.outcome).medianMs
 */
export function sweepPointOf(
  value: number,
  o: Pick<RunOutcome, 'timing' | 'throughput' | 'verdict' | 'traffic' | 'arithmetic' | 'config'>,
): SweepPoint {
  const stats = o.timing && batchStats(o.timing.samples.length ? o.timing.samples : [o.timing.ms]);
  const traffic = o.traffic?.length ? totalTraffic(o.traffic) : undefined;
  return {
    value,
    status: 'done',
    pass: o.verdict.pass,
    ...(stats ? { ms: stats.min, medianMs: stats.median, batches: stats.n } : {}),
    ...(o.throughput ? { throughput: o.throughput.value, unit: o.throughput.unit } : {}),
    ...(traffic ? { bytes: traffic.bytes, ops: traffic.ops } : {}),
    arithmetic: o.arithmetic ?? 'int8',
    arm: o.config.arm,
  };
}

/** What a finished point achieved at its median time, and where it sits under the roofs. */
export interface SweepPointPerf {
  value: number;
  /** `${axis}=${value}`: the point's label on the roofline. */
  label: string;
  medianMs: number;
  bytes: number;
  ops: number;
  /** bytes / median time, GB/s. */
  gbs: number;
  /** ops / byte (arithmetic intensity). */
  intensity: number;
  /** On the roofline of its arithmetic and arm, when the adapter's peaks are known. */
  point?: RooflinePoint;
}

const positive = (x: number | undefined): x is number => x !== undefined && Number.isFinite(x) && x > 0;

/**
 * A stored point's performance at its median ms, against `peaks` when given: undefined for a point that
 * did not finish or carries no bytes (stored before sweeps kept them) or no usable median.
 * @example sweepPointPerf('m', point, probe.peaks)?.point?.peakFraction
 */
export function sweepPointPerf(axis: string, p: SweepPoint, peaks?: Peaks): SweepPointPerf | undefined {
  const { medianMs, bytes, ops } = p;
  if (p.status !== 'done' || !positive(medianMs) || !positive(bytes)) return undefined;
  if (ops === undefined || !Number.isFinite(ops) || ops < 0) return undefined;
  const label = `${axis}=${p.value}`;
  const perf: SweepPointPerf = {
    value: p.value,
    label,
    medianMs,
    bytes,
    ops,
    gbs: bytes / (medianMs * 1e6),
    intensity: ops / bytes,
  };
  if (!peaks || !positive(peaks.bandwidthGBs) || !p.arithmetic || !p.arm) return perf;
  const roof = peaksFor(peaks, p.arithmetic, p.arm);
  return { ...perf, point: rooflinePoint({ label, ms: medianMs, bytes, ops }, roof.bandwidthGBs, roof.ops) };
}

/** Whether a sweep's % of peak can be shown, and if not, why. */
export type SweepPeaksUse =
  /** Against this adapter's measured peaks. */
  | 'measured'
  /** No probe has run on this adapter: the view offers to run it. */
  | 'no-probe'
  /** Swept on another adapter than this one: this one's peaks do not apply. */
  | 'other-adapter'
  /** Points finished but none carries bytes and ops: a sweep stored before they were kept. */
  | 'not-recorded';

/**
 * How the sweep's points can be held to peaks on the adapter `deviceId` with `peaks` measured (or not).
 * A sweep with nothing finished yet is judged by the adapter and the peaks alone, so the probe can be
 * offered while its first point runs.
 * @example sweepPeaksUse(record, state.device.deviceId, probe?.peaks) // 'no-probe'
 */
export function sweepPeaksUse(
  record: Pick<SweepRecord, 'axis' | 'deviceId' | 'points'>,
  deviceId: string | undefined,
  peaks: Peaks | undefined,
): SweepPeaksUse {
  const finished = record.points.filter((p) => p.status === 'done');
  if (finished.length && !finished.some((p) => sweepPointPerf(record.axis, p))) return 'not-recorded';
  if (record.deviceId !== deviceId) return 'other-adapter';
  return peaks ? 'measured' : 'no-probe';
}

/** One row of the sweep's time chart: a finished point with a usable fastest time. */
export interface SweepChartRow {
  value: number;
  ms: number;
  medianMs?: number;
  throughput?: number;
  /** % of peak at the median (0..100), when the point is on the roofline. */
  pctPeak?: number;
}

/**
 * The points of a sweep as the chart and the table use them: each point with its performance (undefined
 * where there is none), and the chart's rows (the finished points with a positive fastest ms; refused,
 * failed and cancelled points are the table's alone).
 */
export function sweepView(
  record: Pick<SweepRecord, 'axis' | 'points'>,
  peaks?: Peaks,
): { perf: (SweepPointPerf | undefined)[]; chart: SweepChartRow[] } {
  const perf = record.points.map((p) => sweepPointPerf(record.axis, p, peaks));
  const chart = record.points.flatMap((p, i): SweepChartRow[] => {
    if (p.status !== 'done' || !positive(p.ms)) return [];
    const fraction = honestPeak(perf[i]?.point)?.fraction;
    return [
      {
        value: p.value,
        ms: p.ms,
        ...(positive(p.medianMs) ? { medianMs: p.medianMs } : {}),
        ...(p.throughput !== undefined && Number.isFinite(p.throughput) ? { throughput: p.throughput } : {}),
        ...(fraction !== undefined && Number.isFinite(fraction) ? { pctPeak: fraction * 100 } : {}),
      },
    ];
  });
  return { perf, chart };
}

/**
 * The roofline of a sweep (rooflineChart's input): one whole-plan row per point on the roofline, and the
 * roofs of the first such point's arithmetic and arm (a sweep runs one config, so they are all the same).
 * Undefined when no point is on the roofline.
 */
export function sweepRoofline(
  record: Pick<SweepRecord, 'points'>,
  perf: readonly (SweepPointPerf | undefined)[],
  peaks: Peaks,
):
  | {
      rows: Pick<PerfRow, 'label' | 'kind' | 'point'>[];
      roof: ReturnType<typeof peaksFor>;
      arithmetic: 'int8' | 'f16';
      arm: Arm;
    }
  | undefined {
  const on = perf.flatMap((p) => (p?.point ? [p.point] : []));
  const first = record.points.find((p, i) => perf[i]?.point && p.arithmetic && p.arm);
  if (!on.length || !first?.arithmetic || !first.arm) return undefined;
  return {
    rows: on.map((point) => ({ label: point.label, kind: 'plan', point })),
    roof: peaksFor(peaks, first.arithmetic, first.arm),
    arithmetic: first.arithmetic,
    arm: first.arm,
  };
}
