// The f16 coopmat twin on a real WebGPU device (Dawn; SwiftShader in CI): the seed's tiles against the
// seed's oracle (rel_to_max < 5e-2) AND against the exact f16 emulation, multi-workgroup grids with m/n
// tails, instrumented ownership == analytic, a broken kernel failing, ShapeError on bad shapes.
import { describe, expect, it } from 'vitest';
import { bitMismatches, judge, relToMax } from '../src/kernels/compare';
import {
  coopmatF16Family,
  coopmatPlan,
  coopmatSplitExtents,
  dequantQ4kRows,
  fragmentTileIndex as tiledIndex,
  SPLIT_STAGE_DEFAULT,
  coopmatWgsl,
  coopmatSpec,
  type CoopmatPrepared,
} from '../src/kernels/coopmat';
import { ShapeError, type ProblemConfig, type TileParams } from '../src/kernels/family';
import { planeWidth } from '../src/kernels/gpu/caps';
import { decodeOwnership } from '../src/kernels/gpu/instrument';
import { runPlan } from '../src/kernels/gpu/run';
import { f32ToF16Bits } from '../src/kernels/quant';
import { getTestGpu, withValidation } from './gpu';

/** Indices (at most 10) where two f16 bit arrays differ. */
function bitMismatchesU16(got: Uint16Array, want: Uint16Array): number[] {
  const bad: number[] = [];
  for (let i = 0; i < want.length && bad.length < 10; i++) if (got[i] !== want[i]) bad.push(i);
  if (got.length !== want.length) bad.push(-1);
  return bad;
}

const SEED_TILES: [number, number, number, number][] = [
  [1, 1, 1, 1],
  [2, 2, 1, 1],
  [1, 1, 2, 2],
  [2, 2, 2, 2],
  [2, 2, 4, 4],
];

function cfg(
  tile: TileParams,
  m: number,
  n: number,
  k: number,
  plane: number,
  extra: Partial<ProblemConfig> = {},
): ProblemConfig {
  return {
    ...coopmatF16Family.defaults,
    kernel: 'coopmat-f16',
    arm: 'scalar',
    plane,
    m,
    n,
    k,
    tile,
    ...extra,
  };
}

const tileOf = ([wm, wn, rm, rn]: [number, number, number, number]): TileParams => ({ wm, wn, rm, rn });

describe('coopmat-f16 on the GPU', async () => {
  const { device, caps } = await getTestGpu();
  const plane = planeWidth(caps);
  // The scalar arm reproduces the f16 emulation bit for bit, under the decode rounding the compiler
  // chose (SwiftShader rounds d*sc*q and - dmin*m separately; the H200's compiler fuses them).
  async function check(prep: CoopmatPrepared, label: string) {
    const r = await withValidation(device, () => runPlan(device, prep.plan));
    const got = new Float32Array(r.output);
    const seed = judge(got, prep.oracle(), prep.gate);
    const emu = prep.judgeEmulation(got);
    console.log(
      `[coopmat] ${label}: rel_to_max vs mmq_q4k_f16_ref ${seed.relToMax.toExponential(2)}, vs f16 emulation (${emu.decode} decode) ${emu.relToMax.toExponential(2)}`,
    );
    expect(seed.pass, `${label} vs the seed oracle: ${seed.relToMax}`).toBe(true);
    expect(emu.pass, `${label} vs the f16 emulation: ${emu.relToMax}`).toBe(true);
    if (prep.spec.arm === 'scalar') expect(bitMismatches(got, prep.emulation(emu.decode)), label).toEqual([]);
    return got;
  }

  for (const t of SEED_TILES) {
    const tile = tileOf(t);
    const bm = tile.wm * tile.rm * 16;
    const bn = tile.wn * tile.rn * 16;
    it(`seed tile (${t.join(',')}) ${bm}x${bn} at k 256 and 512 (m = BM, n = BN)`, async () => {
      for (const k of [256, 512])
        await check(
          coopmatF16Family.prepare(cfg(tile, bm, bn, k, plane), caps),
          `(${t.join(',')}) ${bm}x${bn}x${k}`,
        );
    });
  }

  it('multi-workgroup grids with tails: 48x80 at (1,1,1,1) = 5x3 workgroups; 40x72 and 17x50 at (2,2,1,1), partial tiles', async () => {
    await check(
      coopmatF16Family.prepare(cfg(tileOf([1, 1, 1, 1]), 48, 80, 256, plane), caps),
      '(1,1,1,1) 48x80x256',
    );
    await check(
      coopmatF16Family.prepare(cfg(tileOf([2, 2, 1, 1]), 40, 72, 256, plane), caps),
      '(2,2,1,1) 40x72x256',
    );
    await check(
      coopmatF16Family.prepare(cfg(tileOf([2, 1, 1, 2]), 17, 50, 512, plane), caps),
      '(2,1,1,2) 17x50x512',
    );
  });

  it("random data (ggml-quantized gaussian weights) and a logical plane wider than the hardware's", async () => {
    await check(
      coopmatF16Family.prepare(
        cfg(tileOf([1, 2, 2, 1]), 32, 40, 256, plane, { dataSource: 'random', dataSeed: 5 }),
        caps,
      ),
      'random (1,2,2,1) 32x40x256',
    );
    await check(
      coopmatF16Family.prepare(cfg(tileOf([2, 1, 1, 1]), 32, 16, 256, 16), caps),
      'plane 16 (2,1,1,1) 32x16x256',
    );
  });

  it('K-stage depths 2, 4 and 8 (per-quad B staging), padded rows and the pipelined (prefetched, double-buffered) staging: bit-exact vs the emulation, tails and 2 super-blocks included', async () => {
    for (const [t, m, n, k, kStage, rowPad, pipeline, p, aDirect] of [
      [tileOf([2, 2, 1, 1]), 40, 72, 512, 2, 0, false, plane],
      [tileOf([1, 2, 2, 1]), 32, 40, 256, 4, 8, false, plane],
      [tileOf([2, 1, 1, 2]), 17, 50, 512, 8, 0, false, plane],
      [tileOf([2, 1, 1, 2]), 17, 50, 256, 1, 8, false, plane],
      // Pipelined: 16 stages over 2 super-blocks with m/n tails, and at a logical plane of 64 a workgroup
      // of 128 invocations for 64 B loads a stage (BN*2), so the item guards are exercised too.
      [tileOf([2, 2, 1, 1]), 40, 72, 512, 1, 8, true, plane],
      [tileOf([1, 2, 2, 1]), 32, 40, 256, 1, 0, true, plane],
      [tileOf([2, 1, 1, 2]), 17, 50, 512, 1, 8, true, 64],
      // ... and with A read straight from the f16 pre-pass copy (2 passes; m tails read its zero rows).
      [tileOf([2, 2, 1, 1]), 40, 72, 512, 1, 8, true, plane, true],
      [tileOf([2, 1, 1, 2]), 17, 50, 256, 1, 0, true, 64, true],
    ] as const) {
      const prep = coopmatF16Family.prepare(
        cfg(t, m, n, k, p, { dataSource: 'random', dataSeed: kStage + rowPad }),
        caps,
      );
      const spec = { ...prep.spec, kStage, rowPad, pipeline, aDirect: aDirect ?? false };
      const label = `kStage ${kStage} rowPad ${rowPad}${pipeline ? ' pipelined' : ''}${aDirect ? ' A direct' : ''} plane ${p} (${[t.wm, t.wn, t.rm, t.rn].join(',')}) ${m}x${n}x${k}`;
      await check({ ...prep, spec, plan: coopmatPlan(spec, prep.data) }, label);
    }
  });

  it('the split plan: the weight pre-pass writes f16(dequant) rows or 16x16 tiles (zero past n), the activation pre-pass 16x16 f16 tiles (zero past m), and the scalar GEMM on them is bit-exact vs the emulation', async () => {
    // wPer: the weight pre-pass's items per invocation (1 = one, 4 = the default, 2 and 8).
    for (const [t, m, n, k, p, b, wPer, pre] of [
      [tileOf([2, 2, 1, 1]), 40, 72, 512, plane, 'rows', 1, 'separate'],
      [tileOf([1, 2, 2, 1]), 32, 40, 256, plane, 'rows', 4, 'separate'],
      [tileOf([2, 1, 1, 2]), 17, 50, 512, 64, 'rows', 8, 'separate'],
      [tileOf([2, 2, 1, 1]), 40, 72, 512, plane, 'tiles', 2, 'separate'],
      [tileOf([2, 1, 1, 2]), 17, 50, 512, 64, 'tiles', 4, 'separate'],
      // Both pre-passes as one dispatch (the weight's workgroups, then the activation's).
      [tileOf([2, 2, 1, 1]), 40, 72, 512, plane, 'rows', 4, 'fused'],
      [tileOf([2, 1, 1, 2]), 17, 50, 512, 64, 'tiles', 1, 'fused'],
    ] as const) {
      const prep = coopmatF16Family.prepare(cfg(t, m, n, k, p, { dataSource: 'random', dataSeed: m }), caps);
      const splitStage = { ...SPLIT_STAGE_DEFAULT, b, wPer, pre };
      const spec = { ...prep.spec, split: true, splitStage };
      const plan = coopmatPlan(spec, prep.data);
      expect(plan.passes[0]!.wgsl).toContain(`(${wPer} items)`);
      const label = `split (wh ${b}, ${wPer} items an invocation, ${pre} pre-passes) plane ${p} (${[t.wm, t.wn, t.rm, t.rn].join(',')}) ${m}x${n}x${k}`;
      expect(plan.passes.map((q) => q.label)).toEqual([
        ...(pre === 'fused'
          ? ['coopmat-f16 weight and activation to f16']
          : ['coopmat-f16 weight Q4_K to f16', 'coopmat-f16 activation to f16 tiles']),
        expect.stringContaining('coopmat-f16 scalar'),
      ]);
      const r = await withValidation(device, () => runPlan(device, plan, { read: ['wh', 'xt'] }));
      const got = await check({ ...prep, spec, plan }, label);
      expect(got.length).toBe(m * n);
      // The pre-passes' outputs, element by element (f16 bits), padding rows included.
      const { mp, np } = coopmatSplitExtents(spec);
      const wh = new Uint16Array(r.reads.wh!);
      const xt = new Uint16Array(r.reads.xt!);
      const emu = prep.judgeEmulation(new Float32Array(r.output)).decode;
      const w = dequantQ4kRows(prep.data.w, n, k, emu);
      const whWant = new Uint16Array(np * k);
      for (let row = 0; row < n; row++)
        for (let col = 0; col < k; col++)
          whWant[b === 'rows' ? row * k + col : tiledIndex(row, col, k)] = f32ToF16Bits(w[row * k + col]!);
      expect(bitMismatchesU16(wh.subarray(0, np * k), whWant), `${label} wh`).toEqual([]);
      const xtWant = new Uint16Array(mp * k);
      for (let row = 0; row < m; row++)
        for (let col = 0; col < k; col++)
          xtWant[tiledIndex(row, col, k)] = f32ToF16Bits(prep.data.x[row * k + col]!);
      expect(bitMismatchesU16(xt.subarray(0, mp * k), xtWant), `${label} xt`).toEqual([]);
    }
  });

  it('the split plan with B decoded in the GEMM (q4k): no weight pre-pass, and the scalar GEMM decoding Q4_K itself is bit-exact vs the emulation', async () => {
    for (const [t, m, n, k, p, sk] of [
      [tileOf([2, 2, 1, 1]), 40, 72, 512, plane, 64],
      [tileOf([2, 1, 1, 2]), 17, 50, 768, 64, 128],
      [tileOf([1, 2, 2, 1]), 32, 40, 256, plane, 64],
    ] as const) {
      const prep = coopmatF16Family.prepare(cfg(t, m, n, k, p, { dataSource: 'random', dataSeed: n }), caps);
      const spec = {
        ...prep.spec,
        split: true,
        splitStage: { ...SPLIT_STAGE_DEFAULT, b: 'q4k' as const, k: sk },
      };
      const plan = coopmatPlan(spec, prep.data);
      expect(plan.passes.map((q) => q.label)).toEqual([
        'coopmat-f16 activation to f16 tiles',
        expect.stringContaining('coopmat-f16 scalar'),
      ]);
      expect(plan.buffers.map((b) => b.name)).not.toContain('wh');
      expect(plan.passes[1]!.bindings).toEqual(['xt', 'wqs', 'wsc', 'wd', 'wdm', 'out']);
      const label = `split (B q4k, ${sk}-wide) plane ${p} (${[t.wm, t.wn, t.rm, t.rn].join(',')}) ${m}x${n}x${k}`;
      const got = await check({ ...prep, spec, plan }, label);
      expect(got.length).toBe(m * n);
    }
  });

  it('instrumented ownership == analytic on a tailed multi-workgroup grid and a register-blocked tile', async () => {
    for (const [t, m, n] of [
      [tileOf([2, 2, 1, 1]), 40, 72],
      [tileOf([1, 2, 2, 1]), 32, 64],
    ] as const) {
      const prep = coopmatF16Family.prepare(cfg(t, m, n, 256, plane), caps);
      expect(prep.phases).toEqual(['register-accumulator']);
      const r = await runPlan(device, prep.instrumentedPlan, { read: [prep.ownerBuffer] });
      const got = decodeOwnership(r.reads[prep.ownerBuffer]!, prep.rows, prep.cols);
      const want = prep.analyticOwnership('register-accumulator');
      expect([...got.count]).toEqual([...want.count]); // every output exactly once, tails included
      expect([...got.workgroup]).toEqual([...want.workgroup]);
      expect([...got.plane]).toEqual([...want.plane]);
      expect([...got.lane]).toEqual([...want.lane]);
      expect(relToMax(new Float32Array(r.output), prep.oracle())).toBeLessThan(5e-2);
    }
  });

  it('a broken kernel fails: no f16 rounding of the weight passes the seed gate but fails the emulation gate; a dropped sub-block fails both', async () => {
    const prep = coopmatF16Family.prepare(cfg(tileOf([2, 2, 1, 1]), 32, 32, 256, plane), caps);
    const code = prep.plan.passes[0]!.wgsl;
    const run = async (wgsl: string) =>
      new Float32Array((await runPlan(device, prep.plan, { wgslOverride: { 0: wgsl } })).output);
    // 1. Skip the last 32-block of K: a real indexing bug.
    const dropped = code.replace('for (var kb = 0u; kb < KB; kb++)', 'for (var kb = 0u; kb < KB - 1u; kb++)');
    expect(dropped).not.toBe(code);
    const g1 = await run(dropped);
    expect(judge(g1, prep.oracle(), prep.gate).pass).toBe(false);
    // 2. Forget the affine min (w = d*sc*q instead of d*sc*q - dmin*m): the Q4_K decode bug.
    const noMin = code.replaceAll(' - ms', '');
    expect(noMin).not.toBe(code);
    expect(judge(await run(noMin), prep.oracle(), prep.gate).pass).toBe(false);
    // 3. Sum in f32 without rounding the weight to f16: close to the f32 oracle, but not the f16 kernel.
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
    expect(judge(g3, prep.oracle(), prep.gate).pass).toBe(true);
    expect(prep.judgeEmulation(g3).pass).toBe(false);
  });

  it('bad shapes, tiles and arms throw ShapeError before any dispatch', () => {
    const t = tileOf([1, 1, 1, 1]);
    expect(() => coopmatF16Family.prepare(cfg(t, 16, 16, 100, plane), caps)).toThrow(ShapeError);
    expect(() => coopmatF16Family.prepare(cfg(t, 16, 16, 100, plane), caps)).toThrow(
      /k = 100 must be a positive multiple of the 256-wide/,
    );
    expect(() => coopmatF16Family.prepare(cfg(t, 0, 16, 256, plane), caps)).toThrow(
      /m = 0 must be a positive integer/,
    );
    expect(() =>
      coopmatF16Family.prepare(cfg({ wm: 0, wn: 1, rm: 1, rn: 1 }, 16, 16, 256, plane), caps),
    ).toThrow(/tile wm = 0/);
    expect(() => coopmatF16Family.prepare(cfg(t, 16, 16, 256, 6), caps)).toThrow(
      /plane 6 must be a power of two/,
    );
    expect(() => coopmatF16Family.prepare(cfg(tileOf([16, 16, 1, 1]), 16, 16, 256, plane), caps)).toThrow(
      /invocations exceeds/,
    );
    expect(() => coopmatF16Family.prepare(cfg(tileOf([1, 1, 16, 16]), 16, 16, 256, plane), caps)).toThrow(
      /workgroup memory|f32 per lane/,
    );
    expect(() => coopmatF16Family.prepare(cfg(t, 16, 16, 256, plane, { arm: 'dp4a' }), caps)).toThrow(
      /no 'dp4a' arm/,
    );
    expect(coopmatF16Family.validate(cfg(t, 16, 16, 256, plane), caps)).toEqual([]);
  });

  it('subgroup-matrix arm: runs where the adapter has f16->f32 16x16x16, else is refused with the reason', async (ctx) => {
    const c = cfg(tileOf([2, 2, 2, 2]), 64, 64, 256, plane, { arm: 'subgroup-matrix' });
    const errs = coopmatF16Family.validate(c, caps);
    if (errs.length) {
      expect(errs.join(' ')).toMatch(
        /subgroup-matrix arm unavailable: (adapter does not expose|adapter has no shader-f16|no f16->f32)/,
      );
      expect(() => coopmatF16Family.prepare(c, caps)).toThrow(ShapeError);
      // The WGSL is still generated (and snapshot-tested in src/kernels/coopmat/coopmat.test.ts).
      expect(coopmatWgsl({ ...coopmatSpec(c, caps), f16: 'native' })).toContain(
        'subgroupMatrixMultiplyAccumulate',
      );
      ctx.skip(`${caps.description || 'this adapter'}: ${errs.join('; ')}`);
      return;
    }
    const prep = coopmatF16Family.prepare(c, caps);
    await check(prep, 'subgroup-matrix (2,2,2,2) 64x64x256');
  });
});
