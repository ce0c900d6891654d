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

  it('owner changes: a mask of elements whose lane moved', () => {
    const c = ownerChanges(owners([0, 1, 2, 3]), owners([0, 1, 3, 2]))!;
    expect(Array.from(c.mask)).toEqual([0, 0, 1, 1]);
    expect(c.changed).toBe(2);
    expect(ownerChanges(owners([0]), owners([0, 1]))).toBeUndefined();
  });
});
