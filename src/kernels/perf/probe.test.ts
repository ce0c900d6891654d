import { describe, expect, it } from 'vitest';
import { matrixWgsl } from './probe';

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
