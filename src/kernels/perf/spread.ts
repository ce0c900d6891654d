// The spread of timed batches, and the comparison of two configs timed in interleaved rounds. A figure
// is its batches' median with their min, p90 and max beside it (the runner times several batches of
// back-to-back runs: ../gpu/timing.ts); two configs differ measurably only when their intervals do not
// overlap, so one noisy re-timing cannot make a speedup.

/** The spread of a sample (ms per run of each batch, or of each round). */
export interface Spread {
  n: number;
  min: number;
  median: number;
  /** Nearest-rank 90th percentile. */
  p90: number;
  max: number;
}

/**
 * Min, median, p90 and max of `samples`; throws RangeError on an empty or non-finite sample.
 * @example spreadOf([3, 1, 2]) // { n: 3, min: 1, median: 2, p90: 3, max: 3 }
 */
export function spreadOf(samples: readonly number[]): Spread {
  if (!samples.length) throw new RangeError('no samples to summarise');
  if (samples.some((s) => !Number.isFinite(s)))
    throw new RangeError(`samples must be finite numbers (got ${samples.join(', ')})`);
  const s = [...samples].sort((a, b) => a - b);
  const n = s.length;
  const mid = n >> 1;
  const median = n % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  const p90 =
    s[
      Math.min(
        // Stryker disable next-line ArithmeticOperator: ceil(0.9 n) - 1 <= n - 1, so the clamp never binds
        n - 1,
        Math.ceil(0.9 * n) - 1,
      )
    ]!;
  return { n, min: s[0]!, median, p90, max: s[n - 1]! };
}

/** Histogram bins of a sample: `bins` equal-width bins from its min to its max (one bin when all equal). */
export function histogram(
  samples: readonly number[],
  bins = 8,
): { from: number; to: number; count: number }[] {
  const { min, max } = spreadOf(samples);
  const k = max > min ? Math.max(1, Math.floor(bins)) : 1;
  const width = (max - min) / k;
  const out = Array.from({ length: k }, (_, i) => ({
    from: min + i * width,
    to: min + (i + 1) * width,
    count: 0,
  }));
  for (const v of samples) out[width > 0 ? Math.min(k - 1, Math.floor((v - min) / width)) : 0]!.count++;
  return out;
}

/** What an interleaved comparison of an incumbent (A) and a challenger (B) found. */
export interface Comparison {
  /** 'faster': B's slowest round beat A's fastest; 'slower': the reverse; otherwise no claim. */
  verdict: 'faster' | 'slower' | 'no measurable difference';
  /** A's median / B's median (> 1: B is faster by that factor). */
  ratio: number;
  a: Spread;
  b: Spread;
}

/**
 * Compare two configs timed in interleaved rounds (A B A B ...; one figure per config per round): B is
 * 'faster' only when its [min, max] interval lies wholly below A's, 'slower' when wholly above, else
 * there is no measurable difference. Throws RangeError when either has no rounds.
 * @example compareRounds([1.0, 1.02, 0.99], [0.7, 0.72, 0.71]).verdict // 'faster'
 */
export function compareRounds(a: readonly number[], b: readonly number[]): Comparison {
  const sa = spreadOf(a);
  const sb = spreadOf(b);
  const verdict = sb.max < sa.min ? 'faster' : sa.max < sb.min ? 'slower' : 'no measurable difference';
  return { verdict, ratio: sa.median / sb.median, a: sa, b: sb };
}

/**
 * A comparison in words: "1.32x faster (incumbent 1.20 ms [1.18-1.25], challenger 0.91 ms [0.90-0.93],
 * 4 rounds)": the challenger is the hunt's best finalist, which is the winner only when it is faster.
 */
export function comparisonText(
  c: Comparison,
  fmt: (ms: number) => string = (ms) => `${ms.toPrecision(3)} ms`,
): string {
  const range = (s: Spread) => `${fmt(s.median)} [${fmt(s.min)}-${fmt(s.max)}]`;
  const head =
    c.verdict === 'faster'
      ? `${c.ratio.toFixed(2)}x faster`
      : c.verdict === 'slower'
        ? `${(1 / c.ratio).toFixed(2)}x slower`
        : 'no measurable difference';
  return `${head} (incumbent ${range(c.a)}, challenger ${range(c.b)}, ${c.a.n} rounds)`;
}
