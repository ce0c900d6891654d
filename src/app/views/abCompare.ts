// The numbers behind the A/B tab, pure: each side's batch timing as min / median / n, the B/A ratio and
// whether the batches' ranges overlap (then no difference is measurable), the error maps' difference,
// and the elements whose owner changed between the runs.
import { spreadOf } from '../../kernels/perf/spread';
import type { OwnershipBuffers, RunTiming } from '../../workers/protocol';
import { logPosition, type Rgb } from './analysis';

/** A side's timing: the batches' fastest (the runner's figure), median, slowest, and how many. */
export interface BatchStats {
  min: number;
  median: number;
  max: number;
  n: number;
}

/**
 * Min, median, max and count of batch samples (ms per run, the finite ones; spreadOf's figures);
 * undefined without samples.
 * @example batchStats([3, 1, 2]) // { min: 1, median: 2, max: 3, n: 3 }
 */
export function batchStats(samples: readonly number[]): BatchStats | undefined {
  const finite = samples.filter(Number.isFinite);
  if (!finite.length) return undefined;
  const { min, median, max, n } = spreadOf(finite);
  return { min, median, max, n };
}

export interface AbTiming {
  a: BatchStats;
  b: BatchStats;
  /** B's time over A's, by the fastest batch and by the median (< 1: B is faster). */
  ratioMin: number;
  ratioMedian: number;
  /** The sides' batch ranges overlap: the difference is within the noise. */
  overlap: boolean;
}

/**
 * The A/B timing of two runs' timings (undefined when either was not timed).
 * @example abTiming(a.timing, b.timing)?.ratioMin // 0.5: B takes half A's time
 */
export function abTiming(a: RunTiming | undefined, b: RunTiming | undefined): AbTiming | undefined {
  const sa = a && batchStats(a.samples.length ? a.samples : [a.ms]);
  const sb = b && batchStats(b.samples.length ? b.samples : [b.ms]);
  if (!sa || !sb) return undefined;
  return {
    a: sa,
    b: sb,
    ratioMin: sb.min / sa.min,
    ratioMedian: sb.median / sa.median,
    overlap: sa.min <= sb.max && sb.min <= sa.max,
  };
}

/**
 * The ratio in words: "B is 1.52× faster than A", or that the batches overlap.
 * @example ratioText(abTiming(a, b)!) // 'B takes 0.66× A's time (1.52× faster)'
 */
export function ratioText(t: AbTiming): string {
  if (t.overlap) return `no measurable difference: the batches overlap (B/A ${t.ratioMin.toFixed(2)}×)`;
  const r = t.ratioMin;
  // Stryker disable next-line EqualityOperator: equal fastest batches always overlap, so r is never 1 here
  return r < 1
    ? `B takes ${r.toFixed(2)}× A's time (${(1 / r).toFixed(2)}× faster)`
    : `B takes ${r.toFixed(2)}× A's time (${r.toFixed(2)}× slower)`;
}

/**
 * The difference of two error maps in log position (-1..1: B's error minus A's on the heatmaps' log
 * scale; 0 where both are equal); undefined when the maps differ in size.
 * @example errorDelta(errA, errB)[i] > 0 // B is worse at element i
 */
export function errorDelta(a: ArrayLike<number>, b: ArrayLike<number>): Float32Array | undefined {
  if (a.length !== b.length) return undefined;
  const out = new Float32Array(a.length);
  const pos = (e: number) => (Number.isFinite(e) ? Math.max(0, logPosition(e)) : 1);
  // Stryker disable next-line EqualityOperator: i <= length writes past the end, which a typed array ignores
  for (let i = 0; i < a.length; i++)
    // Equal errors have equal positions: the shortcut's 0 is what the difference gives anyway.
    // Stryker disable next-line ConditionalExpression: the shortcut forced off is equivalent (see above)
    out[i] = a[i] === b[i] ? 0 : pos(b[i]!) - pos(a[i]!);
  return out;
}

/** Colour of an error difference: blue where B is better, red where B is worse, dark where equal. */
export function deltaColor(d: number): Rgb {
  const t = Math.min(1, Math.abs(d));
  if (t === 0) return [24, 30, 40];
  const base = 60 + Math.round(195 * t);
  // Stryker disable next-line EqualityOperator: d = 0 returned above (t = 0), so > and >= agree here
  return d > 0 ? [base, 50, 60] : [50, 90, base];
}

/**
 * Elements whose owner (workgroup, plane or lane) differs between two ownership maps, as a 0/1 mask
 * and a count; undefined when the maps differ in size.
 * @example ownerChanges(a.ownership, b.ownership)?.changed // 0 for the same tile
 */
export function ownerChanges(
  a: OwnershipBuffers,
  b: OwnershipBuffers,
): { mask: Uint8Array; changed: number } | undefined {
  if (a.rows !== b.rows || a.cols !== b.cols) return undefined;
  const mask = new Uint8Array(a.count.length);
  let changed = 0;
  // Stryker disable next-line EqualityOperator: i <= length reads undefined on both sides past the end
  for (let i = 0; i < mask.length; i++)
    if (a.workgroup[i] !== b.workgroup[i] || a.plane[i] !== b.plane[i] || a.lane[i] !== b.lane[i]) {
      mask[i] = 1;
      changed++;
    }
  return { mask, changed };
}
