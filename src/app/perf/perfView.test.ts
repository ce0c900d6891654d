// The run's performance rows and roofline points, by hand.
import { describe, expect, it } from 'vitest';
import type { RunOutcome } from '../../workers/protocol';
import { perfRows, rooflineChart, si } from './perfView';

const outcome = {
  config: {
    kernel: 'coopmat-f16',
    arm: 'scalar',
    plane: 32,
    data: { source: 'synthetic', seed: 0 },
    params: {},
  },
  arithmetic: 'f16',
  timing: {
    ms: 1,
    samples: [1, 2, 3],
    runs: 1,
    method: 'timestamp',
    resolutionNs: 1,
    coarse: false,
    passes: [
      { label: 'prepass', ms: 0.5, coarse: false, samples: [0.5, 0.5, 0.7] },
      { label: 'gemm', ms: 1, coarse: false, samples: [1, 1.5, 2] },
    ],
  },
  traffic: [
    { label: 'prepass', readBytes: 1e6, writeBytes: 1e6, bytes: 2e6, ops: 0, buffers: [] },
    { label: 'gemm', readBytes: 1e6, writeBytes: 0, bytes: 1e6, ops: 2e9, buffers: [] },
  ],
} satisfies Pick<RunOutcome, 'config' | 'arithmetic' | 'timing' | 'traffic'>;

describe('perfRows', () => {
  it('the plan then each pass, at the batches median, against the roof of the arm', () => {
    const rows = perfRows(outcome, { bandwidthGBs: 10, ops: { 'f16-vector': 1e12 } })!;
    expect(rows.map((r) => [r.label, r.bytes, r.ops, r.spread.median])).toEqual([
      ['whole plan', 3e6, 2e9, 2],
      ['1. prepass', 2e6, 0, 0.5],
      ['2. gemm', 1e6, 2e9, 1.5],
    ]);
    // Plan: 3e6 B in 2 ms = 1.5 GB/s of 10; 2e9 ops in 2 ms = 1e12 ops/s; intensity 666.7, compute-bound.
    const plan = rows[0]!.point!;
    expect(plan.gbs).toBeCloseTo(1.5);
    expect(plan.opsPerSec).toBeCloseTo(1e12);
    expect(plan.bound).toBe('compute');
    expect(plan.peakFraction).toBeCloseTo(1);
    // The prepass only moves data: 2e6 B in 0.5 ms = 4 GB/s, 40% of the bandwidth.
    expect(rows[1]!.point!.peakFraction).toBeCloseTo(0.4);
    const { timing: _untimed, ...untimed } = outcome;
    expect(perfRows(untimed)).toBeUndefined();
    expect(perfRows(outcome)![0]!.point).toBeUndefined();
  });

  it('places the run, its passes with ops and the tuned configs under the roofs', () => {
    const rows = perfRows(outcome, { bandwidthGBs: 10, ops: { 'f16-vector': 1e12 } })!;
    const chart = rooflineChart(
      rows,
      { bandwidthGBs: 10, ops: 1e12 },
      [
        { config: 'A', label: 'wm=1', verdict: 'measured', ms: 4, bytes: 1e6 },
        { config: 'B', verdict: 'rejected', ms: Infinity },
      ],
      2e9,
    );
    expect(chart.run).toHaveLength(1);
    expect(chart.passes.map((p) => p.label)).toEqual(['2. gemm']);
    expect(chart.configs).toEqual([{ x: 2000, y: 5e11, label: 'wm=1' }]);
    // The ridge at 1e12 / 1e10 = 100 ops/B; the roof climbs to it, then is flat.
    expect(chart.roofs[1]).toEqual({ x: 100, y: 1e12, label: 'roof' });
    expect(chart.roofs[2]!.y).toBe(1e12);
    expect(chart.roofs[0]!.y).toBeCloseTo(chart.roofs[0]!.x * 1e10);
  });

  it('formats rates', () => {
    expect(si(1.234e12)).toBe('1.23 T');
    expect(si(4.56e8)).toBe('456 M');
    expect(si(12)).toBe('12.0');
  });
});
