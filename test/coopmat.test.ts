// The f16 coopmat twin on a real WebGPU device (Dawn; SwiftShader in CI): the reference's tiles against
// its oracle (rel_to_max < 5e-2) AND against the exact f16 emulation, every staging the product offers,
// multi-workgroup grids with m/n tails, instrumented ownership == analytic, a broken kernel failing,
// ShapeError on bad shapes.
import { describe, expect, it } from 'vitest';
import { bitMismatches, judge, relToMax } from '../src/kernels/compare';
import {
  COOPMAT_REFERENCE_GATE,
  coopmatF16Family,
  coopmatSpecOf,
  coopmatSplitExtents,
  coopmatWgsl,
  dequantQ4kRows,
  judgeEmulation,
  mmqQ4kF16Ref,
  mmqQ4kF16RoundedRef,
  type CoopmatBuilt,
  type CoopmatStaging,
} from '../src/kernels/coopmat';
import { ShapeError, type DataChoice, type ResolvedConfig } from '../src/kernels/family';
import { planeWidth } from '../src/kernels/gpu/caps';
import { fragmentTileIndex as tiledIndex } from '../src/kernels/gpu/prepass';
import { decodeOwnership } from '../src/kernels/gpu/instrument';
import { runPlan } from '../src/kernels/gpu/runner';
import { f32ToF16Bits } from '../src/kernels/quant';
import { getFastTestGpu, withValidation } from './gpu';
import { skipBecause } from './skip';

/** Indices (at most 10) where two f16 bit arrays differ. */
function bitMismatchesU16(got: Uint16Array, want: Uint16Array): number[] {
  const bad: number[] = [];
  for (let i = 0; i < want.length && bad.length < 10; i++) if (got[i] !== want[i]) bad.push(i);
  if (got.length !== want.length) bad.push(-1);
  return bad;
}

type Tile4 = readonly [number, number, number, number];

const REFERENCE_TILES: Tile4[] = [
  [1, 1, 1, 1],
  [2, 2, 1, 1],
  [1, 1, 2, 2],
  [2, 2, 2, 2],
  [2, 2, 4, 4],
];

function cfg(
  [wm, wn, rm, rn]: Tile4,
  m: number,
  n: number,
  k: number,
  plane: number,
  over: { staging?: CoopmatStaging; ksplit?: number; data?: DataChoice; arm?: ResolvedConfig['arm'] } = {},
): ResolvedConfig {
  return {
    kernel: 'coopmat-f16',
    arm: over.arm ?? 'scalar',
    plane,
    data: over.data ?? { source: 'reference', seed: 0 },
    params: { m, n, k, wm, wn, rm, rn, staging: over.staging ?? 'one-pass', ksplit: over.ksplit ?? 1 },
  };
}

describe('coopmat-f16 on the GPU', async () => {
  const { device, caps } = await getFastTestGpu();
  const plane = planeWidth(caps);
  // The scalar arm reproduces the f16 emulation bit for bit, under the decode rounding the compiler
  // chose (SwiftShader rounds d*sc*q and - dmin*m separately; the H200's compiler fuses them).
  async function check(b: CoopmatBuilt, label: string, read: string[] = []) {
    const r = await withValidation(device, () => runPlan(device, b.plan, { read }));
    const got = new Float32Array(r.output);
    const { x, w } = b.data();
    const { m, n, k } = b.spec;
    const reference = judge(got, mmqQ4kF16Ref(x, w, m, n, k), COOPMAT_REFERENCE_GATE);
    const emu = judgeEmulation(got, (d) => mmqQ4kF16RoundedRef(x, w, m, n, k, d));
    console.log(
      `[coopmat] ${label}: rel_to_max vs mmq_q4k_f16_ref ${reference.relToMax.toExponential(2)}, vs f16 emulation (${emu.decode} decode) ${emu.relToMax.toExponential(2)}`,
    );
    expect(reference.pass, `${label} vs the reference oracle: ${reference.relToMax}`).toBe(true);
    expect(emu.pass, `${label} vs the f16 emulation: ${emu.relToMax}`).toBe(true);
    // The family's own verdict: the emulation (separate decode, as every adapter but a fusing one runs).
    expect(judge(got, b.facts.oracle(), b.facts.gate).pass, `${label} family gate`).toBe(true);
    if (b.spec.arm === 'scalar')
      expect(bitMismatches(got, mmqQ4kF16RoundedRef(x, w, m, n, k, emu.decode)), label).toEqual([]);
    return { got, reads: r.reads, decode: emu.decode };
  }

  for (const t of REFERENCE_TILES) {
    const [wm, wn, rm, rn] = t;
    const [bm, bn] = [wm * rm * 16, wn * rn * 16];
    it(`reference tile (${t.join(',')}) ${bm}x${bn} at k 256 and 512 (m = BM, n = BN)`, async () => {
      for (const k of [256, 512])
        await check(
          coopmatF16Family.build(cfg(t, bm, bn, k, plane), caps),
          `(${t.join(',')}) ${bm}x${bn}x${k}`,
        );
    });
  }

  it('multi-workgroup grids with tails: 48x80 at (1,1,1,1) = 5x3 workgroups; 40x72 and 17x50 at (2,2,1,1), partial tiles', async () => {
    for (const [t, m, n, k] of [
      [[1, 1, 1, 1], 48, 80, 256],
      [[2, 2, 1, 1], 40, 72, 256],
      [[2, 1, 1, 2], 17, 50, 512],
    ] as const)
      await check(coopmatF16Family.build(cfg(t, m, n, k, plane), caps), `(${t.join(',')}) ${m}x${n}x${k}`);
  });

  it('split-K: parts of K summed by a reduction pass in z order, bit-exact vs the emulation of that order', async () => {
    let reordered = 0;
    for (const [t, m, n, k, staging, ksplit] of [
      [[2, 2, 1, 1], 20, 40, 1024, 'in-gemm', 4],
      [[1, 2, 1, 1], 17, 50, 512, 'prepass', 2],
      [[2, 1, 1, 2], 33, 64, 2048, 'fused-prepass', 8],
    ] as const) {
      const label = `(${t.join(',')}) ${m}x${n}x${k} ${staging} split-K ${ksplit}`;
      const b = coopmatF16Family.build(
        cfg(t, m, n, k, plane, { staging, ksplit, data: { source: 'random', seed: k } }),
        caps,
      );
      expect(b.plan.passes.at(-1)!.label).toBe('coopmat-f16 split-K sum');
      expect(b.plan.passes[b.plan.mainPass]!.workgroups[2]).toBe(ksplit);
      const got = new Float32Array((await withValidation(device, () => runPlan(device, b.plan))).output);
      const { x, w } = b.data();
      expect(bitMismatches(got, b.facts.oracle()), label).toEqual([]);
      expect(judge(got, mmqQ4kF16Ref(x, w, m, n, k), COOPMAT_REFERENCE_GATE).pass, label).toBe(true);
      // The order matters: one accumulator over all of K rounds differently somewhere.
      reordered += bitMismatches(got, mmqQ4kF16RoundedRef(x, w, m, n, k), m * n).length;
    }
    expect(reordered).toBeGreaterThan(0);
  });

  it('stream: K parts of planes added in the workgroup in order, bit-exact vs the emulation; ownership from the sum loop', async () => {
    let reordered = 0;
    for (const [t, m, n, k, ksplit] of [
      [[1, 1, 2, 1], 20, 40, 1024, 4],
      [[1, 1, 1, 2], 7, 64, 512, 2],
      [[2, 1, 1, 1], 33, 16, 1024, 8],
    ] as const) {
      const label = `(${t.join(',')}) ${m}x${n}x${k} stream ${ksplit} parts`;
      const b = coopmatF16Family.build(
        cfg(t, m, n, k, plane, { staging: 'stream', ksplit, data: { source: 'random', seed: k + m } }),
        caps,
      );
      // The activation pre-pass and the GEMM: no weight pre-pass, no reduction pass, one part per group.
      expect(b.plan.passes.map((p) => p.label)).toEqual([
        'coopmat-f16 activation to f16 tiles',
        `coopmat-f16 scalar ${t.join('x')} stream ${ksplit} parts`,
      ]);
      expect(b.plan.passes[1]!.workgroups[2]).toBe(1);
      expect(b.plan.passes[1]!.workgroupSize).toBe(ksplit * t[0] * t[1] * plane);
      const got = new Float32Array((await withValidation(device, () => runPlan(device, b.plan))).output);
      const { x, w } = b.data();
      expect(bitMismatches(got, b.facts.oracle()), label).toEqual([]);
      expect(judge(got, mmqQ4kF16Ref(x, w, m, n, k), COOPMAT_REFERENCE_GATE).pass, label).toBe(true);
      if (ksplit > 1) reordered += bitMismatches(got, mmqQ4kF16RoundedRef(x, w, m, n, k), m * n).length;
      expect(b.facts.phases, label).toEqual(['scalar-epilogue']);
      const r = await runPlan(device, b.instrumentedPlan(), { read: [b.ownerBuffer] });
      const own = decodeOwnership(r.reads[b.ownerBuffer]!, m, n);
      const want = b.facts.analyticOwnership('scalar-epilogue');
      expect([...own.count], label).toEqual([...want.count]);
      expect([...own.workgroup], label).toEqual([...want.workgroup]);
      expect([...own.plane], label).toEqual([...want.plane]);
      expect([...own.lane], label).toEqual([...want.lane]);
    }
    // The parts matter: one accumulator over all of K rounds differently somewhere.
    expect(reordered).toBeGreaterThan(0);
  });

  it("random data (ggml-quantized gaussian weights) and a logical plane wider than the hardware's", async () => {
    await check(
      coopmatF16Family.build(
        cfg([1, 2, 2, 1], 32, 40, 256, plane, { data: { source: 'random', seed: 5 } }),
        caps,
      ),
      'random (1,2,2,1) 32x40x256',
    );
    await check(
      coopmatF16Family.build(cfg([2, 1, 1, 1], 32, 16, 256, 16), caps),
      'plane 16 (2,1,1,1) 32x16x256',
    );
  });

  it('the split stagings: the weight pre-pass writes f16(dequant) rows (zero past n), the activation pre-pass 16x16 f16 tiles (zero past m), and the scalar GEMM on them is bit-exact vs the emulation', async () => {
    for (const [t, m, n, k, p, staging] of [
      [[2, 2, 1, 1], 40, 72, 512, plane, 'prepass'],
      [[1, 2, 2, 1], 32, 40, 256, plane, 'prepass'],
      [[2, 1, 1, 2], 17, 50, 512, 64, 'prepass'],
      // Both pre-passes as one dispatch (the weight's workgroups, then the activation's).
      [[2, 2, 1, 1], 40, 72, 512, plane, 'fused-prepass'],
      [[2, 1, 1, 2], 17, 50, 512, 64, 'fused-prepass'],
    ] as const) {
      const b = coopmatF16Family.build(
        cfg(t, m, n, k, p, { staging, data: { source: 'random', seed: m } }),
        caps,
      );
      expect(b.plan.passes.map((q) => q.label)).toEqual([
        ...(staging === 'fused-prepass'
          ? ['coopmat-f16 weight and activation to f16']
          : ['coopmat-f16 weight Q4_K to f16', 'coopmat-f16 activation to f16 tiles']),
        expect.stringContaining('coopmat-f16 scalar'),
      ]);
      const label = `${staging} plane ${p} (${t.join(',')}) ${m}x${n}x${k}`;
      const { got, reads, decode } = await check(b, label, ['wh', 'xt']);
      expect(got.length).toBe(m * n);
      // The pre-passes' outputs, element by element (f16 bits), padding rows included.
      const { mp, np } = coopmatSplitExtents(b.spec);
      const wh = new Uint16Array(reads.wh!);
      const xt = new Uint16Array(reads.xt!);
      const w = dequantQ4kRows(b.data().w, n, k, decode);
      const whWant = new Uint16Array(np * k);
      for (let row = 0; row < n; row++)
        for (let col = 0; col < k; col++) whWant[row * k + col] = f32ToF16Bits(w[row * k + col]!);
      expect(bitMismatchesU16(wh.subarray(0, np * k), whWant), `${label} wh`).toEqual([]);
      const xtWant = new Uint16Array(mp * k);
      for (let row = 0; row < m; row++)
        for (let col = 0; col < k; col++)
          xtWant[tiledIndex(row, col, k)] = f32ToF16Bits(b.data().x[row * k + col]!);
      expect(bitMismatchesU16(xt.subarray(0, mp * k), xtWant), `${label} xt`).toEqual([]);
    }
  });

  it('in-gemm: no weight pre-pass, and the scalar GEMM decoding Q4_K itself is bit-exact vs the emulation', async () => {
    for (const [t, m, n, k, p] of [
      [[2, 2, 1, 1], 40, 72, 512, plane],
      [[2, 1, 1, 2], 17, 50, 768, 64],
      [[1, 2, 2, 1], 32, 40, 256, plane],
    ] as const) {
      const b = coopmatF16Family.build(
        cfg(t, m, n, k, p, { staging: 'in-gemm', data: { source: 'random', seed: n } }),
        caps,
      );
      expect(b.plan.passes.map((q) => q.label)).toEqual([
        'coopmat-f16 activation to f16 tiles',
        expect.stringContaining('coopmat-f16 scalar'),
      ]);
      expect(b.plan.buffers.map((x) => x.name)).not.toContain('wh');
      expect(b.plan.passes[1]!.bindings).toEqual(['xt', 'wqs', 'wsc', 'wd', 'wdm', 'out', 'grid_slice']);
      const { got } = await check(b, `in-gemm plane ${p} (${t.join(',')}) ${m}x${n}x${k}`);
      expect(got.length).toBe(m * n);
    }
  });

  it('instrumented ownership == analytic on a tailed multi-workgroup grid and a register-blocked tile, one pass and split', async () => {
    for (const [t, m, n, staging] of [
      [[2, 2, 1, 1], 40, 72, 'one-pass'],
      [[1, 2, 2, 1], 32, 64, 'one-pass'],
      [[2, 2, 1, 1], 40, 72, 'in-gemm'],
    ] as const) {
      const b = coopmatF16Family.build(cfg(t, m, n, 256, plane, { staging }), caps);
      expect(b.facts.phases).toEqual(['register-accumulator']);
      const r = await runPlan(device, b.instrumentedPlan(), { read: [b.ownerBuffer] });
      const got = decodeOwnership(r.reads[b.ownerBuffer]!, b.facts.rows, b.facts.cols);
      const want = b.facts.analyticOwnership('register-accumulator');
      expect([...got.count]).toEqual([...want.count]); // every output exactly once, tails included
      expect([...got.workgroup]).toEqual([...want.workgroup]);
      expect([...got.plane]).toEqual([...want.plane]);
      expect([...got.lane]).toEqual([...want.lane]);
      expect(relToMax(new Float32Array(r.output), b.facts.oracle())).toBeLessThan(1e-5);
    }
  });

  it('a broken kernel fails: no f16 rounding of the weight passes the reference gate but fails the emulation gate; a dropped sub-block fails both', async () => {
    const b = coopmatF16Family.build(cfg([2, 2, 1, 1], 32, 32, 256, plane), caps);
    const { x, w } = b.data();
    const ref = mmqQ4kF16Ref(x, w, 32, 32, 256);
    const code = b.plan.passes[0]!.wgsl;
    const run = async (wgsl: string) =>
      new Float32Array((await runPlan(device, b.plan, { wgslOverride: { 0: wgsl } })).output);
    // 1. Skip the last 32-block of K: a real indexing bug.
    const dropped = code.replace('for (var kb = 0u; kb < KB; kb++)', 'for (var kb = 0u; kb < KB - 1u; kb++)');
    expect(dropped).not.toBe(code);
    expect(judge(await run(dropped), ref, COOPMAT_REFERENCE_GATE).pass).toBe(false);
    // 2. Forget the affine min (w = d*sc*q instead of d*sc*q - dmin*m): the Q4_K decode bug.
    const noMin = code.replaceAll(' - ms', '');
    expect(noMin).not.toBe(code);
    expect(judge(await run(noMin), ref, COOPMAT_REFERENCE_GATE).pass).toBe(false);
    // 3. Sum in f32 without rounding the weight to f16: close to the f32 reference, but not the f16 kernel.
    const f32b = code
      .replace(
        /fn get_b\(i: u32\) -> vec2f \{[^\n]*\}/,
        'fn get_b(i: u32) -> vec2f { return stage_b_f32[i]; }',
      )
      .replace(
        /fn put_b\(i: u32, v: vec2f\) \{[^\n]*\}/,
        'var<workgroup> stage_b_f32: array<vec2f, BN * 16u>;\nfn put_b(i: u32, v: vec2f) { stage_b_f32[i] = v; }',
      );
    expect(f32b).not.toBe(code);
    const g3 = await run(f32b);
    expect(judge(g3, ref, COOPMAT_REFERENCE_GATE).pass).toBe(true);
    expect(judge(g3, b.facts.oracle(), b.facts.gate).pass).toBe(false);
  });

  it('bad shapes, tiles and arms throw ShapeError before any dispatch, one message each', () => {
    const t = [1, 1, 1, 1] as const;
    const problems = (c: ResolvedConfig) => coopmatF16Family.validate(c, caps);
    expect(() => coopmatF16Family.build(cfg(t, 16, 16, 300, plane), caps)).toThrow(ShapeError);
    expect(problems(cfg(t, 16, 16, 300, plane))).toEqual([
      'k = 300 is not a multiple of 256 (the Q4_K super-block)',
    ]);
    expect(problems(cfg(t, 0, 16, 256, plane))).toEqual(['m = 0 must be at least 1']);
    expect(problems(cfg([0, 1, 1, 1], 16, 16, 256, plane))).toEqual(['wm = 0 must be at least 1']);
    expect(problems(cfg(t, 16, 16, 256, 6))).toEqual(['plane width 6 must be a power of two from 1 to 256']);
    expect(() => coopmatF16Family.build(cfg([16, 16, 1, 1], 16, 16, 256, plane), caps)).toThrow(
      /invocations per workgroup > this adapter's/,
    );
    expect(problems(cfg([1, 1, 16, 16], 16, 16, 256, 4)).join()).toMatch(/f32 accumulators per lane/);
    expect(problems(cfg(t, 16, 16, 256, plane, { arm: 'dp4a' }))).toEqual([
      'coopmat-f16 has no dp4a arm (it has scalar, subgroup-matrix)',
    ]);
    expect(problems(cfg(t, 16, 16, 256, plane))).toEqual([]);
  });

  it('subgroup-matrix arm: runs every staging where the adapter has f16->f32 16x16x16, else is refused with the reason', async (ctx) => {
    const stagings: CoopmatStaging[] = ['one-pass', 'prepass', 'fused-prepass', 'in-gemm'];
    const c = (staging: CoopmatStaging) =>
      cfg([2, 2, 2, 2], 64, 64, 256, caps.subgroupMaxSize || plane, { staging, arm: 'subgroup-matrix' });
    const errs = coopmatF16Family.validate(c('one-pass'), caps);
    if (errs.length) {
      expect(errs.join(' ')).toMatch(/subgroup matrix \(f16\) arm cannot run here: this adapter/);
      expect(() => coopmatF16Family.build(c('one-pass'), caps)).toThrow(ShapeError);
      // The WGSL is still generated (and snapshot-tested in src/kernels/coopmat/coopmat.test.ts).
      expect(coopmatWgsl({ ...coopmatSpecOf(c('prepass'), caps), f16: 'native' })).toContain(
        'subgroupMatrixMultiplyAccumulate',
      );
      await skipBecause(ctx, 'no-subgroup-matrix', errs.join('; '), { matrixComponent: 'f16' });
    }
    for (const s of stagings)
      await check(coopmatF16Family.build(c(s), caps), `subgroup-matrix (2,2,2,2) 64x64x256 ${s}`);
  });
});
