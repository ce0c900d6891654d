// Roofline arithmetic, pure: what a timed pass achieved (GB/s, operations per second, arithmetic
// intensity) against an adapter's measured peaks (./probe.ts), and where it sits under the roofs:
// attainable = min(peak ops, intensity x peak bandwidth). Units: bytes, ops, ms in; GB/s (1e9 B/s) and
// ops/s out.
import type { Arm } from '../gpu/caps';

/** A compute roof the probe measures: which units an arm of an arithmetic runs on. */
export type ComputeRoof = 'f16-matrix' | 'f16-vector' | 'int8-matrix' | 'int8-dot4' | 'int8-scalar';

/** An adapter's measured peaks: memory bandwidth and each compute roof it offers (absent: not measured). */
export interface Peaks {
  /** Streaming copy bandwidth, GB/s (bytes read + bytes written per second / 1e9). */
  bandwidthGBs: number;
  /** Operations per second per roof (an FMA or a multiply-add counts 2). */
  ops: Partial<Record<ComputeRoof, number>>;
}

/**
 * The roof an arm of an arithmetic runs against: the matrix arm on the subgroup-matrix units (the
 * int8 matrix falls back to dot4 where the probe has no int8 matrix figure), dp4a on dot4I8Packed, the
 * scalar arm on plain int8 or f16 vector FMA.
 * @example roofOf('int8', 'dp4a') // 'int8-dot4'
 */
export function roofOf(arithmetic: 'int8' | 'f16', arm: Arm): ComputeRoof {
  if (arithmetic === 'f16') return arm === 'subgroup-matrix' ? 'f16-matrix' : 'f16-vector';
  return arm === 'subgroup-matrix' ? 'int8-matrix' : arm === 'dp4a' ? 'int8-dot4' : 'int8-scalar';
}

/** The peak ops/s of a roof, falling back from a missing matrix figure to the next unit down. */
export function peakOpsOf(peaks: Peaks, roof: ComputeRoof): number | undefined {
  const order: Record<ComputeRoof, ComputeRoof[]> = {
    'f16-matrix': ['f16-matrix', 'f16-vector'],
    'f16-vector': ['f16-vector'],
    'int8-matrix': ['int8-matrix', 'int8-dot4', 'int8-scalar'],
    'int8-dot4': ['int8-dot4', 'int8-scalar'],
    'int8-scalar': ['int8-scalar'],
  };
  for (const r of order[roof]) {
    const v = peaks.ops[r];
    if (
      // Stryker disable next-line ConditionalExpression: undefined > 0 is false; the check only narrows the type
      v !== undefined &&
      v > 0
    )
      return v;
  }
  return undefined;
}

/** Where one timed piece of work sits on the roofline. */
export interface RooflinePoint {
  label: string;
  ms: number;
  bytes: number;
  ops: number;
  /** Achieved bandwidth, GB/s. */
  gbs: number;
  /** Achieved operations per second. */
  opsPerSec: number;
  /** ops / byte; 0 for a pass that only moves data. */
  intensity: number;
  /** min(peak ops, intensity x peak bandwidth), ops/s; undefined without a compute peak. */
  attainable?: number;
  /** 'memory' when intensity x bandwidth is the lower roof (always for a pass without ops). */
  bound: 'memory' | 'compute';
  /** Achieved GB/s as a fraction of the peak bandwidth. */
  bandwidthFraction: number;
  /** Achieved ops/s as a fraction of the compute peak (undefined without one). */
  computeFraction?: number;
  /**
   * The fraction of the roof above the point: ops/s / attainable for work with ops, GB/s / peak for a
   * pass that only moves data. "% of peak" in the app.
   */
  peakFraction: number;
}

/**
 * A point on the roofline from bytes, ops and ms, against `peakBandwidthGBs` and `peakOps` (ops/s).
 * @example rooflinePoint({ label: 'gemm', ms: 2, bytes: 4e6, ops: 1e9 }, 100, 1e12).peakFraction
 */
export function rooflinePoint(
  work: { label: string; ms: number; bytes: number; ops: number },
  peakBandwidthGBs: number,
  peakOps: number | undefined,
): RooflinePoint {
  const { label, ms, bytes, ops } = work;
  if (!(ms > 0)) throw new RangeError(`${label}: time ${ms} ms must be positive`);
  if (!(peakBandwidthGBs > 0))
    throw new RangeError(`peak bandwidth ${peakBandwidthGBs} GB/s must be positive`);
  const seconds = ms / 1e3;
  const gbs = bytes / seconds / 1e9;
  const opsPerSec = ops / seconds;
  const intensity = bytes > 0 ? ops / bytes : 0;
  const memoryRoof = intensity * peakBandwidthGBs * 1e9;
  const bandwidthFraction = gbs / peakBandwidthGBs;
  const measured = { label, ms, bytes, ops, gbs, opsPerSec, intensity, bandwidthFraction };
  if (peakOps === undefined || ops === 0)
    return { ...measured, bound: 'memory', peakFraction: bandwidthFraction };
  const attainable = Math.min(peakOps, memoryRoof);
  return {
    ...measured,
    attainable,
    bound: memoryRoof < peakOps ? 'memory' : 'compute',
    computeFraction: opsPerSec / peakOps,
    peakFraction: opsPerSec / attainable,
  };
}

/** The intensity where the memory roof meets the compute roof (ops/byte): the ridge point. */
export const ridgeIntensity = (peakBandwidthGBs: number, peakOps: number): number =>
  peakOps / (peakBandwidthGBs * 1e9);
