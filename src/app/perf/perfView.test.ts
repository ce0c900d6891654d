// The run's performance rows and roofline points, by hand.
import { describe, expect, it } from 'vitest';
import type { RunOutcome } from '../../workers/protocol';
import { honestPeak, missingRoofText, peaksFor, perfRows, rooflineChart, si } from './perfView';

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
    // The ridge at 1e12 / 1e10 = 100 ops/B; the memory roof climbs to it, the compute roof is flat from it.
    expect(chart.memoryRoof.at(-1)).toEqual({ x: 100, y: 1e12, label: 'ridge' });
    expect(chart.memoryRoof[0]!.y).toBeCloseTo(chart.memoryRoof[0]!.x * 1e10);
    expect(chart.computeRoof.map((p) => [p.x, p.y])).toEqual([
      [100, 1e12],
      [chart.domain.x[1], 1e12],
    ]);
    // Each roof is named with its figure.
    expect(chart.names).toEqual({ memory: 'memory roof 10.0 GB/s', compute: 'compute roof 1.00 T ops/s' });
  });

  it('spans whole decades that hold every point and the roofs, and marks a point far below', () => {
    const rows = perfRows(outcome, { bandwidthGBs: 10, ops: { 'f16-vector': 1e12 } })!;
    const chart = rooflineChart(rows, { bandwidthGBs: 10, ops: 1e12 });
    const [x0, x1] = chart.domain.x;
    const [y0, y1] = chart.domain.y;
    for (const p of [...chart.run, ...chart.passes, ...chart.memoryRoof, ...chart.computeRoof]) {
      expect(p.x).toBeGreaterThanOrEqual(x0);
      expect(p.x).toBeLessThanOrEqual(x1);
      expect(p.y).toBeGreaterThanOrEqual(y0);
      expect(p.y).toBeLessThanOrEqual(y1);
    }
    expect(chart.ticks.y[0]).toBe(y0);
    expect(chart.ticks.y.at(-1)).toBe(y1);
    expect(chart.outside).toEqual([]);
    // A tiny run on a fast adapter: 1e4 ops/s under a 1e15 roof, more than ROOFLINE_DECADES below the
    // top: drawn on the lower edge and listed as outside, not on the axis as if it were there.
    const slow = rooflineChart(
      [
        {
          label: 'whole plan',
          kind: 'plan',
          point: { ...rows[0]!.point!, intensity: 10, opsPerSec: 1e4 },
        },
      ],
      { bandwidthGBs: 1000, ops: 1e15 },
    );
    expect(slow.domain.y).toEqual([1e10, 1e16]);
    expect(slow.run).toEqual([]);
    expect(slow.outside).toEqual([
      { x: 10, y: 1e10, measuredY: 1e4, label: 'whole plan', side: 'below', series: 'run' },
    ]);
    // The memory roof enters at the bottom edge rather than below it.
    expect(slow.memoryRoof[0]!.y).toBeGreaterThanOrEqual(1e10);
  });

  it('draws no roofline for an arm without a measured compute roof, and says what is missing', () => {
    const peaks = { bandwidthGBs: 10, ops: { 'int8-dot4': 1e12 } };
    const rows = perfRows(outcome, peaks)!; // an f16 run: no f16-vector roof measured
    const why = missingRoofText('f16', 'scalar', [
      { kind: 'f16-vector', why: 'no shader-f16 on this adapter' },
    ]);
    expect(why).toBe('no f16-vector compute peak (no shader-f16 on this adapter)');
    const chart = rooflineChart(rows, peaksFor(peaks, 'f16', 'scalar'), [], 0, why);
    expect(chart.missing).toMatch(
      /^No roofline: no f16-vector compute peak \(no shader-f16 on this adapter\)/,
    );
    expect([...chart.memoryRoof, ...chart.computeRoof, ...chart.run, ...chart.passes]).toEqual([]);
    // Nor a "% of peak" that is the bandwidth share of compute-heavy work, called memory-bound.
    expect(rows[0]!.point!.bound).toBe('memory'); // what roofline.ts says without a compute roof
    expect(honestPeak(rows[0]!.point)).toBeUndefined();
    // A pass that only moves data is held to the bandwidth, which is measured.
    expect(honestPeak(rows[1]!.point)).toEqual({ fraction: expect.closeTo(0.4) as number, bound: 'memory' });
  });

  it('formats rates', () => {
    expect(si(1.234e12)).toBe('1.23 T');
    expect(si(4.56e8)).toBe('456 M');
    expect(si(12)).toBe('12.0');
  });
});
