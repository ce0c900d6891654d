import { describe, expect, it } from 'vitest';
import { matrixWgsl, probeShouldGrow } from './probe';

describe('the f16 subgroup-matrix probe', () => {
  // Tint rejects a matrix store whose array stride is below the result's element size: the H200 probe
  // failed with "the stride of the array (2 bytes) must be >= the matrix element size (4 bytes)".
  it.each(['f32', 'f16'] as const)('stores %s results into an array of that element type', (result) => {
    const wgsl = matrixWgsl(result, 32);
    const stores = [...wgsl.matchAll(/subgroupMatrixStore<row_major>\(&(\w+),/g)].map((m) => m[1]);
    expect(stores.length).toBeGreaterThan(0);
    for (const target of new Set(stores)) {
      const decl = new RegExp(`var<workgroup> ${target}: array<(\\w+), 256>`).exec(wgsl);
      expect(decl?.[1], target).toBe(result);
    }
  });
});

describe('when a probe kernel grows', () => {
  it('while one run is under the least run time, or too short for the timer to tell', () => {
    expect(probeShouldGrow({ ms: 0.5, coarse: false }, 1)).toBe(true);
    expect(probeShouldGrow({ ms: 1, coarse: false }, 1)).toBe(false);
    expect(probeShouldGrow({ ms: 3, coarse: false }, 4)).toBe(true);
    // A quantized timer read the run as 0 and the wall clock (submission latency and all) said 1.2 ms:
    // the run itself is shorter than one timer step, so it grows.
    expect(probeShouldGrow({ ms: 1.2, coarse: true }, 1)).toBe(true);
  });
});
