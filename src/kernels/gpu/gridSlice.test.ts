// The slicing arithmetic of bounded submissions: boxes that cover a grid exactly once, in order, and
// slice sizes that keep a submission near the budget.
import { describe, expect, it } from 'vitest';
import { TuneRng } from '../tune/rng';
import {
  firstSliceCount,
  gridSliceData,
  nextGridBox,
  nextSliceCount,
  SUBMIT_BUDGET_MS,
  type Grid,
} from './gridSlice';

/** Every box of `grid` taken with `want(i)` workgroups for the i-th. */
function boxes(grid: Grid, want: (i: number) => number) {
  const total = grid[0] * grid[1] * grid[2];
  const out = [];
  for (let done = 0, i = 0; done < total; i++) {
    const b = nextGridBox(grid, done, want(i));
    out.push(b);
    done += b.count;
  }
  return out;
}

describe('grid slices', () => {
  it('cover the grid exactly once, in linear order, each box inside the grid and within its want', () => {
    const rng = new TuneRng(7);
    for (let trial = 0; trial < 300; trial++) {
      const grid: Grid = [1 + rng.int(9), 1 + rng.int(5), 1 + rng.int(4)];
      const wants = Array.from({ length: 400 }, () => 1 + rng.int(50));
      const seen = new Uint8Array(grid[0] * grid[1] * grid[2]);
      let next = 0;
      for (const [i, b] of boxes(grid, (i) => wants[i]!).entries()) {
        expect(b.count).toBeLessThanOrEqual(Math.max(1, wants[i]!));
        expect(b.count).toBe(b.size[0] * b.size[1] * b.size[2]);
        for (let z = 0; z < b.size[2]; z++)
          for (let y = 0; y < b.size[1]; y++)
            for (let x = 0; x < b.size[0]; x++) {
              const [gx, gy, gz] = [b.base[0] + x, b.base[1] + y, b.base[2] + z];
              expect(gx < grid[0] && gy < grid[1] && gz < grid[2]).toBe(true);
              const lin = (gz * grid[1] + gy) * grid[0] + gx;
              seen[lin]!++;
            }
        // Boxes follow each other: the next starts where this one's linear range ended.
        expect((b.base[2] * grid[1] + b.base[1]) * grid[0] + b.base[0]).toBe(next);
        next += b.count;
      }
      expect([...new Set(seen)]).toEqual([1]);
    }
  });

  it('take whole slabs, whole rows, or part of a row, as the want allows', () => {
    expect(nextGridBox([4, 4, 3], 0, 40)).toEqual({ base: [0, 0, 0], size: [4, 4, 2], count: 32 });
    expect(nextGridBox([4, 4, 3], 0, 9)).toEqual({ base: [0, 0, 0], size: [4, 2, 1], count: 8 });
    expect(nextGridBox([4, 4, 3], 16, 9)).toEqual({ base: [0, 0, 1], size: [4, 2, 1], count: 8 });
    expect(nextGridBox([4, 4, 3], 0, 3)).toEqual({ base: [0, 0, 0], size: [3, 1, 1], count: 3 });
    // Mid-row: the row's rest first, whatever the want.
    expect(nextGridBox([4, 4, 3], 1, 100)).toEqual({ base: [1, 0, 0], size: [3, 1, 1], count: 3 });
    expect(nextGridBox([4, 4, 3], 4, 100)).toEqual({ base: [0, 1, 0], size: [4, 3, 1], count: 12 });
    expect(nextGridBox([4, 4, 3], 47, 0)).toEqual({ base: [3, 3, 2], size: [1, 1, 1], count: 1 });
    expect(() => nextGridBox([4, 4, 3], 48, 1)).toThrow(RangeError);
    expect(() => nextGridBox([4, 4, 3], -1, 1)).toThrow(RangeError);
  });

  it('size the next slice to the budget at the last pace, at most 16x, growing by one while under it', () => {
    expect(nextSliceCount(1, 0.05, 250)).toBe(16); // fast: capped at 16x
    expect(nextSliceCount(10, 100, 250)).toBe(25); // fits 25 at that pace
    expect(nextSliceCount(2, 249, 250)).toBe(3); // at least one more while within the budget
    expect(nextSliceCount(3, 300, 250)).toBe(2); // past it: fewer
    expect(nextSliceCount(1, 900, 250)).toBe(1); // never below one
    expect(nextSliceCount(4, 0, 250)).toBe(64);
    expect(nextSliceCount(4, 100)).toBe(nextSliceCount(4, 100, SUBMIT_BUDGET_MS));
  });

  it('size the first slice from the estimate (a quarter of the budget), else one workgroup', () => {
    expect(firstSliceCount(1024, undefined)).toBe(1);
    expect(firstSliceCount(1024, 0)).toBe(1);
    expect(firstSliceCount(1024, 180_000, 250)).toBe(1);
    expect(firstSliceCount(1000, 1000, 250)).toBe(62); // 1000 * 62.5 / 1000
    expect(firstSliceCount(1000, 1, 250)).toBe(1000); // the whole pass fits
  });

  it('put base and grid where the WGSL struct has them (vec3u each, 16-byte aligned)', () => {
    expect([...gridSliceData([1, 2, 3], [4, 5, 6])]).toEqual([1, 2, 3, 0, 4, 5, 6, 0]);
  });
});
