// The f32 baseline GEMM on Dawn/SwiftShader against its f64 oracle: full products with tails, sampled
// elements, ownership, and clear errors for bad shapes and tiles.
import { describe, expect, it } from 'vitest';
import { getTestGpu, withValidation } from './gpu';
import { judge } from '../src/kernels/compare';
import { ShapeError } from '../src/kernels/family';
import { decodeOwnership } from '../src/kernels/gpu/instrument';
import { runPlan } from '../src/kernels/gpu/runner';
import {
  gemmF32AnalyticOwnership,
  gemmF32Plan,
  gemmF32Ref,
  gemmF32RefAt,
  gemmF32TileProblems,
  gemmF32Wgsl,
  GEMM_F32_DEFAULT_TILE,
  GEMM_F32_SMALL_TILE,
  GEMM_OWNER_BUFFER,
  type GemmF32Tile,
} from '../src/kernels/baseline';
import { XorShift64 } from '../src/kernels/quant/xorshift';

function randomF32(len: number, seed: bigint): Float32Array {
  const r = new XorShift64(seed);
  return new Float32Array(len).map(() => r.nextU32() / 2147483648 - 1);
}

const GATE = { kind: 'rel-to-max', tol: 1e-5 } as const;

describe('f32 baseline GEMM (Dawn on SwiftShader)', () => {
  const cases: [string, GemmF32Tile, number, number, number][] = [
    ['small tile, exact multiples', GEMM_F32_SMALL_TILE, 64, 64, 128],
    ['small tile, m and n tails', GEMM_F32_SMALL_TILE, 37, 45, 96],
    ['rectangular tile 16x64, tm 4 tn 8', { bm: 16, bn: 64, bk: 8, tm: 4, tn: 8 }, 33, 70, 64],
  ];
  for (const [name, tile, m, n, k] of cases) {
    it(`matches the f64 oracle: ${name} (${m}x${n}x${k})`, async () => {
      const { device, caps } = await getTestGpu();
      const x = randomF32(m * k, 1n + BigInt(m));
      const w = randomF32(n * k, 2n + BigInt(n));
      // Poison: the output buffer starts as NaN-free zeros, so also check every element was stored.
      const r = await withValidation(device, () =>
        runPlan(device, gemmF32Plan({ x, w }, m, n, k, tile, caps, { instrument: true }), {
          read: [GEMM_OWNER_BUFFER],
        }),
      );
      const got = new Float32Array(r.output);
      const v = judge(got, gemmF32Ref(x, w, m, n, k), GATE);
      expect(v.pass, `relToMax ${v.relToMax}`).toBe(true);
      const own = decodeOwnership(r.reads[GEMM_OWNER_BUFFER]!, m, n);
      const want = gemmF32AnalyticOwnership(tile, m, n);
      expect([...own.count].every((c) => c === 1)).toBe(true);
      expect(own.lane).toEqual(want.lane);
      expect(own.workgroup).toEqual(want.workgroup);
    });
  }

  it('sampled oracle agrees with the full oracle', () => {
    const x = randomF32(8 * 32, 5n);
    const w = randomF32(6 * 32, 6n);
    const full = gemmF32Ref(x, w, 8, 6, 32);
    const idx = [0, 5, 13, 47];
    expect([...gemmF32RefAt(x, w, 6, 32, idx)]).toEqual(idx.map((i) => full[i]));
  });

  it('a wrong kernel fails the gate (the test can fail)', async () => {
    const { device, caps } = await getTestGpu();
    const [m, n, k] = [32, 32, 64];
    const x = randomF32(m * k, 7n);
    const w = randomF32(n * k, 8n);
    const plan = gemmF32Plan({ x, w }, m, n, k, GEMM_F32_SMALL_TILE, caps);
    // Drop the last K step: a plausible off-by-one in the loop bound.
    const broken = plan.passes[0]!.wgsl.replace('k0 < dims.k', 'k0 + BK < dims.k');
    expect(broken).not.toBe(plan.passes[0]!.wgsl);
    const r = await runPlan(device, plan, { wgslOverride: { 0: broken } });
    expect(judge(new Float32Array(r.output), gemmF32Ref(x, w, m, n, k), GATE).pass).toBe(false);
  });

  it('rejects bad tiles and shapes with ShapeError before any dispatch', async () => {
    const { caps } = await getTestGpu();
    expect(gemmF32TileProblems({ bm: 64, bn: 64, bk: 16, tm: 6, tn: 4 })).toContain(
      'tm = 6 must be a multiple of 4 (vec4 loads)',
    );
    expect(() => gemmF32Wgsl({ bm: 30, bn: 32, bk: 16, tm: 4, tn: 4 })).toThrow(ShapeError);
    const x = new Float32Array(32 * 100);
    const w = new Float32Array(32 * 100);
    expect(() => gemmF32Plan({ x, w }, 32, 32, 100, GEMM_F32_SMALL_TILE, caps)).toThrow(
      /k = 100 is not a multiple of bk = 16/,
    );
    // 256 threads fit SwiftShader; the default tile's 16 KiB of workgroup memory fits its 32 KiB too.
    expect(() =>
      gemmF32Plan({ x, w }, 32, 32, 100, { ...GEMM_F32_DEFAULT_TILE, tm: 4, tn: 4 }, caps),
    ).toThrow(/threads > maxComputeInvocationsPerWorkgroup/);
  });
});
