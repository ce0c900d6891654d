// A sweep's performance by hand: what a finished run leaves in its point, and from the stored point its
// GB/s, intensity and % of peak at the median; old points, failed points and bad figures are left out.
import { describe, expect, it } from 'vitest';
import type { Peaks } from '../../kernels/perf/roofline';
import type { RunOutcome } from '../../workers/protocol';
import type { SweepPoint, SweepRecord } from '../store/sweep';
import { rooflineChart } from './perfView';
import { sweepPeaksUse, sweepPointOf, sweepPointPerf, sweepRoofline, sweepView } from './sweepPerf';

/** 100 GB/s of copy; dp4a runs against int8-dot4 at 1e12 ops/s: the ridge at 1e12 / 1e11 = 10 ops/B. */
const PEAKS: Peaks = { bandwidthGBs: 100, ops: { 'int8-dot4': 1e12, 'int8-scalar': 2.5e11 } };

const done = (value: number, over: Partial<SweepPoint> = {}): SweepPoint => ({
  value,
  status: 'done',
  ms: 1,
  medianMs: 2,
  bytes: 4e6,
  ops: 8e8,
  arithmetic: 'int8',
  arm: 'dp4a',
  ...over,
});

const record = (points: SweepPoint[]): SweepRecord => ({
  key: 'dev|mmq-q8-naive|m|t',
  deviceId: 'dev',
  kernel: 'mmq-q8-naive',
  base: { kernel: 'mmq-q8-naive', arm: 'dp4a', data: { source: 'reference', seed: 0 }, params: {} },
  axis: 'm',
  points,
  startedAt: 't',
  status: 'complete',
});

describe('sweepPointOf', () => {
  it('keeps the batches fastest and median, the whole plan traffic, the arithmetic and the arm', () => {
    const point = sweepPointOf(64, {
      config: { kernel: 'k', arm: 'dp4a', plane: 32, data: { source: 'reference', seed: 0 }, params: {} },
      verdict: { pass: true } as RunOutcome['verdict'],
      arithmetic: 'int8',
      timing: { ms: 1, samples: [3, 1, 2, 5], runs: 1, method: 'timestamp', resolutionNs: 1, coarse: false },
      throughput: { value: 0.5, unit: 'int8 TOPS' },
      traffic: [
        { label: 'prepass', readBytes: 1e6, writeBytes: 5e5, bytes: 1.5e6, ops: 0, buffers: [] },
        { label: 'gemm', readBytes: 2e6, writeBytes: 5e5, bytes: 2.5e6, ops: 8e8, buffers: [] },
      ],
    });
    // Samples 1, 2, 3, 5: fastest 1, median (2 + 3) / 2 = 2.5; bytes 1.5e6 + 2.5e6 = 4e6.
    expect(point).toEqual({
      value: 64,
      status: 'done',
      pass: true,
      ms: 1,
      medianMs: 2.5,
      batches: 4,
      throughput: 0.5,
      unit: 'int8 TOPS',
      bytes: 4e6,
      ops: 8e8,
      arithmetic: 'int8',
      arm: 'dp4a',
    });
  });
});

describe('sweepPointPerf', () => {
  it('GB/s, intensity and % of peak at the median, against the roof of its arm', () => {
    const perf = sweepPointPerf('m', done(16), PEAKS)!;
    // 4e6 B in 2 ms = 2 GB/s; 8e8 ops / 4e6 B = 200 ops/B, past the ridge (10): compute-bound.
    // 8e8 ops in 2 ms = 4e11 ops/s of the dot4 roof's 1e12 = 40%.
    expect(perf.label).toBe('m=16');
    expect(perf.gbs).toBeCloseTo(2);
    expect(perf.intensity).toBe(200);
    expect(perf.point!.bound).toBe('compute');
    expect(perf.point!.opsPerSec).toBeCloseTo(4e11);
    expect(perf.point!.peakFraction).toBeCloseTo(0.4);
    // The median, not the fastest batch (1 ms would be 80%).
    expect(perf.point!.ms).toBe(2);
  });

  it('a memory-bound point against the bandwidth slope, and the scalar arm against its own roof', () => {
    // 4e6 B, 2e7 ops: 5 ops/B, under the ridge; the roof there is 5 x 1e11 = 5e11 ops/s.
    // 2e7 ops in 2 ms = 1e10 ops/s: 2% of it.
    const memory = sweepPointPerf('m', done(1, { ops: 2e7 }), PEAKS)!.point!;
    expect(memory.bound).toBe('memory');
    expect(memory.attainable).toBeCloseTo(5e11);
    expect(memory.peakFraction).toBeCloseTo(0.02);
    // Scalar: 200 ops/B is past its ridge (2.5e11 / 1e11 = 2.5); 4e11 ops/s over 2.5e11 = 160%.
    expect(sweepPointPerf('m', done(16, { arm: 'scalar' }), PEAKS)!.point!.peakFraction).toBeCloseTo(1.6);
  });

  it('without peaks, or without the arm, figures but no place on the roofline', () => {
    const bare = sweepPointPerf('m', done(16))!;
    expect(bare.gbs).toBeCloseTo(2);
    expect(bare.point).toBeUndefined();
    const { arm: _arm, ...noArm } = done(16);
    expect(sweepPointPerf('m', noArm, PEAKS)!.point).toBeUndefined();
  });

  it('nothing for old, unfinished or unusable points, never a throw', () => {
    const { bytes: _b, ops: _o, arithmetic: _a, arm: _r, ...old } = done(16);
    expect(sweepPointPerf('m', old, PEAKS)).toBeUndefined();
    expect(sweepPointPerf('m', { value: 8, status: 'failed', message: 'lost' }, PEAKS)).toBeUndefined();
    expect(sweepPointPerf('m', done(16, { status: 'cancelled' }), PEAKS)).toBeUndefined();
    for (const bad of [0, -1, NaN, Infinity])
      expect(sweepPointPerf('m', done(16, { medianMs: bad }), PEAKS)).toBeUndefined();
    const { medianMs: _median, ...untimed } = done(16);
    expect(sweepPointPerf('m', untimed, PEAKS)).toBeUndefined();
    expect(sweepPointPerf('m', done(16, { bytes: 0 }), PEAKS)).toBeUndefined();
    expect(sweepPointPerf('m', done(16, { ops: NaN }), PEAKS)).toBeUndefined();
    expect(sweepPointPerf('m', done(16), { bandwidthGBs: 0, ops: {} })!.point).toBeUndefined();
  });
});

describe('sweepView and sweepRoofline', () => {
  const points: SweepPoint[] = [
    { value: 8, status: 'refused', message: 'm = 8 is not a multiple of 16' },
    done(16),
    done(32, { medianMs: 4, ms: 3, bytes: 8e6, ops: 1.6e9, throughput: 0.53 }),
    { value: 48, status: 'failed', message: 'device lost' },
    done(64, { ms: NaN }),
  ];

  it('charts the finished points with a % of peak each; the table has every point', () => {
    const view = sweepView(record(points), PEAKS);
    expect(view.perf.map((p) => p?.value)).toEqual([undefined, 16, 32, undefined, 64]);
    expect(view.chart).toEqual([
      { value: 16, ms: 1, medianMs: 2, pctPeak: expect.closeTo(40, 6) as number },
      { value: 32, ms: 3, medianMs: 4, throughput: 0.53, pctPeak: expect.closeTo(40, 6) as number },
    ]);
    expect(sweepView(record(points)).chart.every((r) => r.pctPeak === undefined)).toBe(true);
    // Peaks without a compute roof for the arm: no % of peak (not the bandwidth share, called memory-bound).
    const bandwidthOnly = sweepView(record(points), { bandwidthGBs: 100, ops: {} });
    expect(bandwidthOnly.perf[1]?.point?.bound).toBe('memory');
    expect(bandwidthOnly.chart.every((r) => r.pctPeak === undefined)).toBe(true);
  });

  it('one roofline point per point on it, labelled with its value, under the roofs of its arm', () => {
    const view = sweepView(record(points), PEAKS);
    const roofline = sweepRoofline(record(points), view.perf, PEAKS)!;
    expect(roofline.roof).toEqual({ bandwidthGBs: 100, ops: 1e12 });
    const chart = rooflineChart(roofline.rows, roofline.roof);
    expect(chart.run.map((p) => p.label)).toEqual(['m=16', 'm=32', 'm=64']);
    expect(chart.run[0]).toEqual({ x: 200, y: expect.closeTo(4e11, -6) as number, label: 'm=16' });
    // The ridge at 10 ops/B lies on the roof polyline.
    expect(chart.memoryRoof.at(-1)!.x).toBe(10);
    expect(sweepRoofline(record(points), sweepView(record(points)).perf, PEAKS)).toBeUndefined();
  });

  it('says why there is no % of peak', () => {
    const r = record(points);
    expect(sweepPeaksUse(r, 'dev', PEAKS)).toBe('measured');
    expect(sweepPeaksUse(r, 'dev', undefined)).toBe('no-probe');
    expect(sweepPeaksUse(r, 'other', PEAKS)).toBe('other-adapter');
    const { bytes: _b, ops: _o, ...old } = done(16);
    expect(sweepPeaksUse(record([old]), 'dev', PEAKS)).toBe('not-recorded');
    // Nothing finished yet: the probe is offered while the first point runs.
    expect(sweepPeaksUse(record([{ value: 1, status: 'running' }]), 'dev', undefined)).toBe('no-probe');
  });
});
