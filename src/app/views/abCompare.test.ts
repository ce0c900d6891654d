import { describe, expect, it } from 'vitest';
import type { OwnershipBuffers, RunTiming } from '../../workers/protocol';
import { abTiming, batchStats, deltaColor, errorDelta, ownerChanges, ratioText } from './abCompare';

const timing = (samples: number[]): RunTiming => ({
  ms: Math.min(...samples),
  samples,
  runs: 4,
  method: 'timestamp',
  resolutionNs: 1000,
  coarse: false,
});

const owners = (lane: number[]): OwnershipBuffers => ({
  rows: 1,
  cols: lane.length,
  count: new Uint32Array(lane.length).fill(1),
  workgroup: new Uint32Array(lane.length),
  plane: new Uint32Array(lane.length),
  lane: Uint32Array.from(lane),
});

describe('A/B comparison', () => {
  it('batch stats: min, median (even and odd counts), max, n', () => {
    expect(batchStats([3, 1, 2])).toEqual({ min: 1, median: 2, max: 3, n: 3 });
    expect(batchStats([4, 1, 2, 3])).toEqual({ min: 1, median: 2.5, max: 4, n: 4 });
    expect(batchStats([])).toBeUndefined();
    // A batch that timed nothing (NaN, Infinity) is left out, not allowed to throw or skew the figures.
    expect(batchStats([3, NaN, 1, Infinity])).toEqual({ min: 1, median: 2, max: 3, n: 2 });
    expect(batchStats([NaN])).toBeUndefined();
  });

  it('a run timed without batch samples counts as one batch of its figure', () => {
    const t = abTiming({ ...timing([]), ms: 2 }, { ...timing([]), ms: 1 })!;
    expect(t.a).toEqual({ min: 2, median: 2, max: 2, n: 1 });
    expect(t.b).toEqual({ min: 1, median: 1, max: 1, n: 1 });
    expect(t.ratioMin).toBe(0.5);
  });

  it('ratio by the median beside the ratio by the fastest batch', () => {
    const t = abTiming(timing([2, 4, 6]), timing([1, 3, 5]))!;
    expect(t.ratioMin).toBe(0.5);
    expect(t.ratioMedian).toBe(0.75);
  });

  it('ranges that touch overlap, from either side; a slower B is worded as slower', () => {
    expect(abTiming(timing([1, 2]), timing([2, 3]))!.overlap).toBe(true);
    expect(abTiming(timing([2, 3]), timing([1, 2]))!.overlap).toBe(true);
    const slower = abTiming(timing([1, 1.1]), timing([2, 2.1]))!;
    expect(slower.overlap).toBe(false);
    expect(ratioText(slower)).toBe("B takes 2.00× A's time (2.00× slower)");
  });

  it('ratio of B to A, and a difference within overlapping batches is not claimed', () => {
    const t = abTiming(timing([2, 2.1, 2.2]), timing([1, 1.05, 1.1]))!;
    expect(t.ratioMin).toBe(0.5);
    expect(t.overlap).toBe(false);
    expect(ratioText(t)).toBe("B takes 0.50× A's time (2.00× faster)");
    const noisy = abTiming(timing([1, 1.5]), timing([1.2, 1.3]))!;
    expect(noisy.overlap).toBe(true);
    expect(ratioText(noisy)).toMatch(/^no measurable difference/);
    expect(abTiming(undefined, timing([1]))).toBeUndefined();
  });

  it('error delta: 0 where equal, positive where B is worse; none across sizes', () => {
    const d = errorDelta([0, 1e-3, 1e-3], [0, 1e-3, 1e-1])!;
    expect(d[0]).toBe(0);
    expect(d[1]).toBe(0);
    expect(d[2]).toBeGreaterThan(0);
    expect(errorDelta([0], [0, 0])).toBeUndefined();
    expect(deltaColor(0)).toEqual([24, 30, 40]);
    expect(deltaColor(1)[0]).toBeGreaterThan(deltaColor(-1)[0]);
  });

  it('error delta is B minus A: negative where B is better, symmetric', () => {
    const worse = errorDelta([1e-3], [1e-1])![0]!;
    const better = errorDelta([1e-1], [1e-3])![0]!;
    expect(better).toBeLessThan(0);
    expect(better).toBeCloseTo(-worse, 6);
  });

  it('delta colour: red for worse, blue for better, brighter with the size of the difference', () => {
    expect(deltaColor(0.5)).toEqual([158, 50, 60]);
    expect(deltaColor(-0.5)).toEqual([50, 90, 158]);
    expect(deltaColor(2)).toEqual([255, 50, 60]);
  });

  it('owner changes: a mask of elements whose lane moved', () => {
    const c = ownerChanges(owners([0, 1, 2, 3]), owners([0, 1, 3, 2]))!;
    expect(Array.from(c.mask)).toEqual([0, 0, 1, 1]);
    expect(c.changed).toBe(2);
    expect(ownerChanges(owners([0]), owners([0, 1]))).toBeUndefined();
  });

  it('owner changes: a moved workgroup or plane counts as well as a moved lane', () => {
    const a = owners([0, 0, 0]);
    const b = { ...owners([0, 0, 0]), workgroup: Uint32Array.of(0, 1, 0), plane: Uint32Array.of(0, 0, 1) };
    const c = ownerChanges(a, b)!;
    expect(Array.from(c.mask)).toEqual([0, 1, 1]);
    expect(c.changed).toBe(2);
  });

  it('owner changes: none across maps of other rows, even with the same columns', () => {
    const tall = { ...owners([0, 0, 0, 0]), rows: 2, cols: 2 };
    const flat = { ...owners([0, 0]), rows: 1, cols: 2 };
    expect(ownerChanges(flat, tall)).toBeUndefined();
  });
});
