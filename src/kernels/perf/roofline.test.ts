// Roofline and spread arithmetic, by hand.
import { describe, expect, it } from 'vitest';
import { peakOpsOf, ridgeIntensity, roofOf, rooflinePoint, type Peaks } from './roofline';
import { compareRounds, comparisonText, histogram, spreadOf } from './spread';

describe('rooflinePoint', () => {
  it('a memory-bound GEMM: 1 GB in 10 ms is 100 GB/s; 1e9 ops over 1e9 B is intensity 1', () => {
    // Peaks: 200 GB/s, 1e12 ops/s: the ridge at 5 ops/B; at intensity 1 the memory roof is 2e11 ops/s.
    const p = rooflinePoint({ label: 'gemm', ms: 10, bytes: 1e9, ops: 1e9 }, 200, 1e12);
    expect(p.gbs).toBeCloseTo(100);
    expect(p.opsPerSec).toBeCloseTo(1e11);
    expect(p.intensity).toBe(1);
    expect(p.attainable).toBeCloseTo(2e11);
    expect(p.bound).toBe('memory');
    expect(p.bandwidthFraction).toBeCloseTo(0.5);
    expect(p.computeFraction).toBeCloseTo(0.1);
    expect(p.peakFraction).toBeCloseTo(0.5);
    expect(ridgeIntensity(200, 1e12)).toBeCloseTo(5);
  });

  it('a compute-bound one: intensity 100 is past the ridge, attainable is the compute peak', () => {
    const p = rooflinePoint({ label: 'gemm', ms: 1, bytes: 1e6, ops: 1e8 }, 200, 1e12);
    expect(p.intensity).toBe(100);
    expect(p.attainable).toBe(1e12);
    expect(p.bound).toBe('compute');
    expect(p.opsPerSec).toBeCloseTo(1e11);
    expect(p.peakFraction).toBeCloseTo(0.1);
  });

  it('a pass that only moves data is held to the bandwidth', () => {
    const p = rooflinePoint({ label: 'prepass', ms: 2, bytes: 1e8, ops: 0 }, 100, 1e12);
    expect(p.gbs).toBeCloseTo(50);
    expect(p.intensity).toBe(0);
    expect(p.attainable).toBeUndefined();
    expect(p.peakFraction).toBeCloseTo(0.5);
  });

  it('refuses a zero time or bandwidth', () => {
    expect(() => rooflinePoint({ label: 'x', ms: 0, bytes: 1, ops: 1 }, 1, 1)).toThrow(/positive/);
    expect(() => rooflinePoint({ label: 'x', ms: 1, bytes: 1, ops: 1 }, 0, 1)).toThrow(/bandwidth/);
  });

  it('picks the roof of an arm and falls back where the probe has no figure', () => {
    expect(roofOf('int8', 'dp4a')).toBe('int8-dot4');
    expect(roofOf('int8', 'scalar')).toBe('int8-scalar');
    expect(roofOf('f16', 'subgroup-matrix')).toBe('f16-matrix');
    expect(roofOf('f16', 'scalar')).toBe('f16-vector');
    const peaks: Peaks = { bandwidthGBs: 1, ops: { 'int8-dot4': 5, 'int8-scalar': 2 } };
    expect(peakOpsOf(peaks, 'int8-matrix')).toBe(5);
    expect(peakOpsOf(peaks, 'int8-scalar')).toBe(2);
    expect(peakOpsOf(peaks, 'f16-matrix')).toBeUndefined();
    expect(roofOf('int8', 'subgroup-matrix')).toBe('int8-matrix');
  });

  it('falls back one unit at a time, each roof to its own units only', () => {
    const only = (roof: keyof Peaks['ops'], v = 7): Peaks => ({ bandwidthGBs: 1, ops: { [roof]: v } });
    expect(peakOpsOf(only('f16-vector'), 'f16-matrix')).toBe(7);
    expect(peakOpsOf(only('f16-matrix'), 'f16-matrix')).toBe(7);
    expect(peakOpsOf(only('f16-matrix'), 'f16-vector')).toBeUndefined();
    expect(peakOpsOf(only('int8-matrix'), 'int8-matrix')).toBe(7);
    expect(peakOpsOf(only('int8-scalar'), 'int8-matrix')).toBe(7);
    expect(peakOpsOf(only('int8-dot4'), 'int8-dot4')).toBe(7);
    expect(peakOpsOf(only('int8-scalar'), 'int8-dot4')).toBe(7);
    expect(peakOpsOf(only('int8-matrix'), 'int8-dot4')).toBeUndefined();
    expect(peakOpsOf(only('f16-vector'), 'int8-scalar')).toBeUndefined();
  });

  it('a zero peak is no figure: the next unit counts', () => {
    const peaks: Peaks = { bandwidthGBs: 1, ops: { 'int8-dot4': 0, 'int8-scalar': 2 } };
    expect(peakOpsOf(peaks, 'int8-dot4')).toBe(2);
    expect(peakOpsOf({ bandwidthGBs: 1, ops: { 'f16-vector': 0 } }, 'f16-vector')).toBeUndefined();
  });

  it('work that moves no bytes has intensity 0, not infinity', () => {
    const p = rooflinePoint({ label: 'registers', ms: 1, bytes: 0, ops: 1e6 }, 100, 1e12);
    expect(p.intensity).toBe(0);
    expect(p.attainable).toBe(0);
    expect(p.bound).toBe('memory');
  });

  it('at the ridge exactly, the compute roof binds', () => {
    // 200 GB/s and 1e12 ops/s meet at 5 ops/B: the two roofs are equal there.
    const p = rooflinePoint({ label: 'gemm', ms: 1, bytes: 1e6, ops: 5e6 }, 200, 1e12);
    expect(p.attainable).toBe(1e12);
    expect(p.bound).toBe('compute');
  });
});

describe('spread', () => {
  it('min, median, p90 and max', () => {
    expect(spreadOf([3, 1, 2])).toEqual({ n: 3, min: 1, median: 2, p90: 3, max: 3 });
    expect(spreadOf([4, 1, 3, 2])).toEqual({ n: 4, min: 1, median: 2.5, p90: 4, max: 4 });
    const ten = [10, 9, 8, 7, 6, 5, 4, 3, 2, 1];
    expect(spreadOf(ten).p90).toBe(9);
    expect(() => spreadOf([])).toThrow(/no samples/);
    expect(() => spreadOf([1, Infinity])).toThrow('samples must be finite numbers (got 1, Infinity)');
  });

  it('a histogram of equal-width bins holding every sample', () => {
    const h = histogram([1, 1.1, 1.2, 2, 3], 4);
    expect(h.map((b) => b.count)).toEqual([3, 0, 1, 1]);
    expect(h[0]!.from).toBe(1);
    expect(h[3]!.to).toBe(3);
    // Every bin's bounds, not just the outer ones: the chart labels each bar with them.
    expect(h.map((b) => [b.from, b.to])).toEqual([
      [1, 1.5],
      [1.5, 2],
      [2, 2.5],
      [2.5, 3],
    ]);
    expect(histogram([2, 2, 2])).toEqual([{ from: 2, to: 2, count: 3 }]);
  });

  it('claims a speedup only when the rounds do not overlap', () => {
    const faster = compareRounds([1.0, 1.02, 0.99], [0.7, 0.72, 0.71]);
    expect(faster.verdict).toBe('faster');
    expect(faster.ratio).toBeCloseTo(1 / 0.71);
    // One noisy incumbent round (the 1.55x that was not): the intervals overlap, no claim.
    const noisy = compareRounds([1.55, 1.0, 1.01], [1.0, 0.99, 1.02]);
    expect(noisy.verdict).toBe('no measurable difference');
    expect(compareRounds([1, 1.01], [1.2, 1.3]).verdict).toBe('slower');
    expect(comparisonText(faster)).toMatch(/^1\.41x faster \(incumbent 1\.00 ms \[0\.990 ms-1\.02 ms\]/);
    expect(comparisonText(noisy)).toMatch(/^no measurable difference/);
  });

  it('intervals that only touch make no claim either way', () => {
    expect(compareRounds([1, 1.1], [1.1, 1.2]).verdict).toBe('no measurable difference');
    expect(compareRounds([1.1, 1.2], [1, 1.1]).verdict).toBe('no measurable difference');
  });

  it('words a slower challenger by how much slower, not by the ratio', () => {
    const slower = compareRounds([1, 1.01, 0.99], [2, 2.02, 1.98]);
    expect(comparisonText(slower)).toBe(
      '2.00x slower (incumbent 1.00 ms [0.990 ms-1.01 ms], challenger 2.00 ms [1.98 ms-2.02 ms], 3 rounds)',
    );
  });
});
