// Node tier for the coopmat twin: the two oracles (the reference's and the exact f16 emulation) on hand
// cases, the reference data, WGSL snapshots of every arm (the subgroup-matrix arm cannot run on
// SwiftShader, so its text is pinned here), the tuner-facing kernel builder and adapter validation.
import { describe, expect, it } from 'vitest';
import { relToMax } from '../compare';
import type { FamilyParams, ResolvedConfig } from '../family';
import { planLimitProblems } from '../gpu/plan';
import { fakeCaps, H200_F16_CONFIGS, H200_INT8_CONFIGS } from '../gpu/testCaps';
import type { TileParams } from '../tile';
import { f32ToF16Bits, genF16Activation, genMmqQ4k, roundToF16, XorShift64, type Q4KWeight } from '../quant';
import {
  buildCoopmatKernel,
  coopmatAnalyticOwnership,
  coopmatData,
  coopmatF16Family,
  coopmatPlan,
  coopmatPrePasses,
  coopmatWgsl,
  coopmatWorkgroupBytes,
  dequantQ4kRows,
  fmaF32,
  mmqQ4kF16Ref,
  mmqQ4kF16RoundedRef,
  type CoopmatSpec,
} from './index';

/** A Q4_K weight [n, k] whose every sub-block has scale sc, min m and code q (d, dmin given). */
function uniformWeight(
  n: number,
  k: number,
  d: number,
  dmin: number,
  sc: number,
  m: number,
  q: number,
): Q4KWeight {
  const nsb = (n * k) / 256;
  const scBytes = new Uint8Array(12);
  for (let j = 0; j < 4; j++) {
    scBytes[j] = sc | ((sc >> 4) << 6); // j < 4 low 6 bits; the high bits carry sc >> 4 of j + 4
    scBytes[j + 4] = m | ((m >> 4) << 6);
    scBytes[j + 8] = (sc & 15) | ((m & 15) << 4);
  }
  const words = new Uint32Array(scBytes.buffer);
  const scales = new Uint32Array(nsb * 3);
  for (let b = 0; b < nsb; b++) scales.set(words, b * 3);
  const byte = q | (q << 4);
  const qs = new Uint32Array(nsb * 32).fill((byte | (byte << 8) | (byte << 16) | (byte << 24)) >>> 0);
  return { qs, scales, d: new Float32Array(nsb).fill(d), dmin: new Float32Array(nsb).fill(dmin) };
}

const tile = (wm: number, wn: number, rm: number, rn: number): TileParams => ({ wm, wn, rm, rn });

describe('coopmat oracles', () => {
  it('hand case: d=0.5 sc=6 q=3, dmin=0.25 m=4 -> w = 9 - 1 = 8; x = 0.25 -> out = 2k exactly (both oracles)', () => {
    const [m, n, k] = [2, 3, 512];
    const w = uniformWeight(n, k, 0.5, 0.25, 6, 4, 3);
    expect(dequantQ4kRows(w, n, k).every((v) => v === 8)).toBe(true);
    const x = new Float32Array(m * k).fill(0.25);
    expect([...mmqQ4kF16Ref(x, w, m, n, k)]).toEqual(new Array(m * n).fill(2 * k));
    expect([...mmqQ4kF16RoundedRef(x, w, m, n, k)]).toEqual(new Array(m * n).fill(2 * k));
  });

  it('the seed reference matches a float64 GEMM to f32 accumulation error; the f16 emulation differs by f16 rounding', () => {
    const [m, n, k] = [4, 5, 512];
    const { w } = genMmqQ4k(m, n, k);
    const x = genF16Activation(m, k);
    const wf = dequantQ4kRows(w, n, k);
    const exact = new Float64Array(m * n);
    const exactF16 = new Float64Array(m * n);
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        for (let l = 0; l < k; l++) {
          exact[i * n + j]! += x[i * k + l]! * wf[j * k + l]!;
          exactF16[i * n + j]! += roundToF16(x[i * k + l]!) * roundToF16(wf[j * k + l]!);
        }
      }
    }
    const ref = mmqQ4kF16Ref(x, w, m, n, k);
    const emu = mmqQ4kF16RoundedRef(x, w, m, n, k);
    expect(relToMax(ref, exact)).toBeLessThan(1e-5);
    expect(relToMax(emu, exactF16)).toBeLessThan(1e-5); // the emulation is the f16-operand product, f32-summed
    const split = relToMax(emu, ref);
    expect(split).toBeGreaterThan(1e-5); // f16 rounding is visible ...
    expect(split).toBeLessThan(5e-2); // ... and within the seed's gate
  });

  it('the emulation rounds with round-to-nearest-even, like f32ToF16Bits (a tie case)', () => {
    // x = 1 + 2^-11 is halfway between two f16 values and rounds to 1; w = 8 exactly.
    const w = uniformWeight(1, 256, 0.5, 0.25, 6, 4, 3);
    const x = new Float32Array(256).fill(1 + 2 ** -11);
    expect(f32ToF16Bits(1 + 2 ** -11)).toBe(0x3c00);
    expect(mmqQ4kF16RoundedRef(x, w, 1, 1, 256)[0]).toBe(256 * 8);
    expect(mmqQ4kF16Ref(x, w, 1, 1, 256)[0]).toBe(Math.fround(256 * 8 * (1 + 2 ** -11)));
  });

  it("'reference' data is the reference's own: gen_mmq_q4k(m, n, k) weights and the 0x123456789ABCDEF0 activation", () => {
    const d = coopmatData(32, 16, 256, 'reference', 0);
    expect([...d.x]).toEqual([...genF16Activation(32, 256)]);
    expect([...d.w.qs]).toEqual([...genMmqQ4k(32, 16, 256).w.qs]);
    const r = coopmatData(8, 8, 256, 'random', 1);
    expect(r.w.d.every((v) => v > 0 && v < 1)).toBe(true); // a real quantizer's f16 d, not random bytes
    expect(coopmatData(8, 8, 256, 'random', 2).x).not.toEqual(r.x);
    expect(() => mmqQ4kF16Ref(new Float32Array(3), r.w, 8, 8, 256)).toThrow(/activation has 3 values/);
  });
});

/** Exact a*b + c for f32 a, b, c as BigInt mantissa x 2^exp, rounded to f32 (nearest-even) in BigInt. */
function refFma(a: number, b: number, c: number): number {
  const dec = (v: number): [bigint, number] => {
    const buf = new Float32Array([v]);
    const bits = new Uint32Array(buf.buffer)[0]!;
    const e = (bits >>> 23) & 0xff;
    const mant = BigInt((bits & 0x7fffff) | (e ? 0x800000 : 0));
    return [bits >>> 31 ? -mant : mant, (e || 1) - 150];
  };
  const [ma, ea] = dec(a);
  const [mb, eb] = dec(b);
  const [mc, ec] = dec(c);
  const emin = Math.min(ea + eb, ec);
  const num = ma * mb * 2n ** BigInt(ea + eb - emin) + mc * 2n ** BigInt(ec - emin);
  if (num === 0n) return 0;
  const neg = num < 0n;
  let mag = neg ? -num : num;
  let shift = mag.toString(2).length - 24;
  if (shift > 0) {
    const rem = mag & ((1n << BigInt(shift)) - 1n);
    const half = 1n << BigInt(shift - 1);
    mag >>= BigInt(shift);
    if (rem > half || (rem === half && (mag & 1n) === 1n)) mag += 1n;
  } else shift = 0;
  const v = Number(mag) * 2 ** (emin + shift);
  return neg ? -v : v;
}

describe('fmaF32 (the fused decode rounding)', () => {
  it('rounds once: (1 + 2^-23)(1 - 2^-23) - 1 = -2^-46, where separate rounding gives 0', () => {
    const [a, b] = [1 + 2 ** -23, 1 - 2 ** -23];
    expect(fmaF32(a, b, -1)).toBe(-(2 ** -46));
    expect(Math.fround(Math.fround(a * b) - 1)).toBe(0);
    // Double rounding: (1 + 2^-12)^2 is exactly halfway between two f32 values; a tiny c decides the side,
    // but the double sum loses it (fround alone would round the tie to even, i.e. down, both times).
    const h = 1 + 2 ** -12;
    expect(fmaF32(h, h, 2 ** -80)).toBe(1 + 2 ** -11 + 2 ** -23);
    expect(fmaF32(h, h, -(2 ** -80))).toBe(1 + 2 ** -11);
    expect(refFma(h, h, 2 ** -80)).toBe(1 + 2 ** -11 + 2 ** -23);
    expect(Math.fround(h * h + 2 ** -80)).toBe(1 + 2 ** -11);
  });

  it('matches an exact BigInt fma on 20k random decode-like triples (f32 ds, 4-bit q, f32 -ms) and general f32s', () => {
    const r = new XorShift64(0x2545f4914f6cdd1dn);
    const f32 = (bits: number) => new Float32Array(new Uint32Array([bits >>> 0]).buffer)[0]!;
    let bad = 0;
    for (let i = 0; i < 20_000; i++) {
      let a: number;
      let b: number;
      let c: number;
      if (i % 2) {
        a = Math.fround((r.nextMod(1000) / 20000 + 0.002) * r.nextMod(64)); // ds = d * sc
        b = r.nextMod(16); // q
        c = -Math.fround((r.nextMod(1000) / 40000) * r.nextMod(64)); // -ms
      } else {
        // Random signs and mantissas, exponents within 2^-20 .. 2^20 so no result is subnormal.
        const e = () => ((107 + r.nextMod(40)) << 23) | (r.nextU32() & 0x807fffff);
        [a, b, c] = [f32(e()), f32(e()), f32(e())];
      }
      if (fmaF32(a, b, c) !== refFma(a, b, c)) bad++;
    }
    expect(bad).toBe(0);
  });
});

describe('coopmat WGSL generator', () => {
  const base: CoopmatSpec = {
    m: 64,
    n: 64,
    k: 256,
    tile: tile(2, 2, 1, 1),
    plane: 32,
    arm: 'scalar',
    f16: 'emulated',
    staging: 'one-pass',
  };
  const matrix = { arm: 'subgroup-matrix', f16: 'native' } as const;
  // Every staging the product offers, on both arms (the matrix arm cannot run on SwiftShader, so its text
  // is pinned here and run by the hardware tier).
  const cases: [string, CoopmatSpec][] = [
    ['scalar.emulated.2x2x1x1.plane32', base],
    ['scalar.native.1x2x2x1.plane32', { ...base, tile: tile(1, 2, 2, 1), f16: 'native' }],
    ['subgroup-matrix.2x2x2x2.plane32', { ...base, tile: tile(2, 2, 2, 2), ...matrix }],
    // The split plan's GEMM: whole blocks (direct fragment stores) and a tailed shape (edge spill path).
    [
      'subgroup-matrix.2x1x4x4.plane32.split',
      { ...base, tile: tile(2, 1, 4, 4), ...matrix, staging: 'prepass' },
    ],
    [
      'subgroup-matrix.2x2x1x2.plane32.split.tails',
      { ...base, m: 40, n: 72, tile: tile(2, 2, 1, 2), ...matrix, staging: 'prepass' },
    ],
    ['scalar.emulated.2x2x1x1.plane32.split', { ...base, staging: 'prepass' }],
    // B decoded from the Q4_K words in the GEMM's stage ('in-gemm').
    [
      'subgroup-matrix.4x1x1x4.plane32.in-gemm',
      { ...base, tile: tile(4, 1, 1, 4), ...matrix, staging: 'in-gemm' },
    ],
    [
      'subgroup-matrix.2x2x1x2.plane32.in-gemm.tails',
      { ...base, m: 40, n: 72, tile: tile(2, 2, 1, 2), ...matrix, staging: 'in-gemm' },
    ],
    ['scalar.emulated.2x2x1x1.plane32.in-gemm', { ...base, staging: 'in-gemm' }],
    // Split-K (grid z, partial sums).
    [
      'subgroup-matrix.2x1x1x2.plane32.in-gemm.ksplit4',
      { ...base, k: 1024, tile: tile(2, 1, 1, 2), ...matrix, staging: 'in-gemm', ksplit: 4 },
    ],
    // The stream GEMM: K parts of planes, words in flight, the parts added in the workgroup.
    [
      'subgroup-matrix.1x1x2x1.plane32.stream.ksplit4',
      { ...base, m: 32, k: 1024, tile: tile(1, 1, 2, 1), ...matrix, staging: 'stream', ksplit: 4 },
    ],
    [
      'scalar.emulated.1x1x2x1.plane32.stream.ksplit2',
      { ...base, m: 20, k: 512, tile: tile(1, 1, 2, 1), staging: 'stream', ksplit: 2 },
    ],
  ];
  for (const [name, spec] of cases) {
    it(`snapshot ${name}`, async () => {
      await expect(coopmatWgsl(spec)).toMatchFileSnapshot(`./__snapshots__/coopmat.${name}.wgsl`);
    });
  }
  // The pre-passes the split stagings dispatch before their GEMM.
  const prePasses: [string, CoopmatSpec][] = [
    ['prepass', { ...base, m: 40, n: 72, staging: 'prepass' }],
    ['fused-prepass', { ...base, m: 40, n: 72, staging: 'fused-prepass' }],
  ];
  for (const [name, spec] of prePasses) {
    it(`snapshot pre-passes of ${name}`, async () => {
      const text = coopmatPrePasses(spec)
        .map(
          ([p, what]) =>
            `// ==== ${what}: grid ${p.grid.join('x')}, writes ${p.writes.map((w) => `${w.name} ${w.bytes} B`).join(', ')}\n${p.wgsl}`,
        )
        .join('\n');
      await expect(text).toMatchFileSnapshot(`./__snapshots__/coopmat.prepasses.${name}.wgsl`);
    });
  }

  it('the stagings dispatch their passes: one pass, weight + activation pre-passes, one fused pre-pass, or the activation alone', () => {
    const labels = (staging: CoopmatSpec['staging']) =>
      coopmatPlan({ ...base, staging }, () => coopmatData(64, 64, 256, 'reference', 0)).passes.map(
        (p) => p.label,
      );
    expect(labels('one-pass')).toEqual(['coopmat-f16 scalar 2x2x1x1']);
    expect(labels('prepass')).toEqual([
      'coopmat-f16 weight Q4_K to f16',
      'coopmat-f16 activation to f16 tiles',
      'coopmat-f16 scalar 2x2x1x1',
    ]);
    expect(labels('fused-prepass')).toEqual([
      'coopmat-f16 weight and activation to f16',
      'coopmat-f16 scalar 2x2x1x1',
    ]);
    expect(labels('in-gemm')).toEqual(['coopmat-f16 activation to f16 tiles', 'coopmat-f16 scalar 2x2x1x1']);
  });

  it('the split GEMM: 64-wide stages, one barrier a stage, A from xt and B staged in line (no helper the range analysis cannot see into), direct stores unless instrumented or tailed', () => {
    const spec: CoopmatSpec = {
      ...base,
      m: 128,
      n: 128,
      k: 512,
      tile: tile(2, 1, 4, 4),
      ...matrix,
      staging: 'prepass',
    };
    const text = buildCoopmatKernel(spec).kernelWgsl;
    const loop = text.slice(text.indexOf('for (var kb = 0u; kb < K / 64u; kb++)'));
    expect(loop.match(/workgroupBarrier\(\)/g)).toHaveLength(1);
    expect(text).toContain('const RS = 72u;');
    // The next stage's A and B loads come before this stage's matrix work, its B stores after it.
    const firstMma = loop.indexOf('subgroupMatrixMultiplyAccumulate');
    expect(loop.indexOf('(&xt[')).toBeLessThan(firstMma);
    // Every A load names one tile at a constant offset and stride, so a browser's bounds checks do not
    // wrap it in a branch: rm 4 x 4 chunks of 16, at stage 0 and in the loop.
    expect(text.match(/subgroupMatrixLoad<[^>]+>, row_major>\(&xt\[[^;]*\], 0u, 16u\)/g)).toHaveLength(
      2 * 4 * 4,
    );
    expect(text).not.toMatch(/&xt,/);
    expect(loop.indexOf('= wh[')).toBeLessThan(firstMma);
    expect(loop.indexOf('sb[o + 7u]')).toBeGreaterThan(loop.lastIndexOf('subgroupMatrixMultiplyAccumulate'));
    expect(text).not.toMatch(/fn put_/);
    expect(text.match(/subgroupMatrixMultiplyAccumulate/g)).toHaveLength(4 * 4 * 4);
    expect(text.match(/subgroupMatrixStore<row_major>\(&out/g)).toHaveLength(16);
    expect(text).not.toMatch(/var<workgroup> sc/);
    // Instrumented: every fragment spilled and stored by lanes through store_out.
    const inst = buildCoopmatKernel(spec, { instrument: true });
    expect(inst.kernelWgsl).not.toMatch(/subgroupMatrixStore<row_major>\(&out/);
    expect(inst.kernelWgsl.match(/copy_out\(warp, lane/g)).toHaveLength(16);
    expect(inst.bindings).toEqual(['xt', 'wh', 'out', 'grid_slice', 'owner']);
    expect(inst.wgsl).toContain('@group(0) @binding(4) var<storage, read_write> owner_dbg');
    // A tailed shape keeps both paths behind a workgroup-uniform test.
    const tailed = buildCoopmatKernel({ ...spec, m: 100 }).kernelWgsl;
    expect(tailed).toContain('if (mrow0 + BM <= M && ncol0 + BN <= N) {');
    expect(tailed.match(/subgroupMatrixStore<row_major>\(&out/g)).toHaveLength(16);
    expect(tailed.match(/copy_out\(warp, lane/g)).toHaveLength(16);
    expect(buildCoopmatKernel(spec).bindings).toEqual(['xt', 'wh', 'out', 'grid_slice']);
    expect(buildCoopmatKernel({ ...spec, staging: 'in-gemm' }).bindings).toEqual([
      'xt',
      'wqs',
      'wsc',
      'wd',
      'wdm',
      'out',
      'grid_slice',
    ]);
    expect(coopmatWorkgroupBytes(spec)).toBe(2 * 64 * 72 * 2 + 2 * 1024);
    expect(coopmatWorkgroupBytes({ ...spec, arm: 'scalar' })).toBe(0);
  });

  it('the matrix arm holds rm*rn f16->f32 16x16x16 results across K, loads f16 tiles with element strides', () => {
    const code = coopmatWgsl({ ...base, tile: tile(1, 2, 2, 3), ...matrix });
    expect(code).toMatch(/^enable f16;\nenable subgroups;\nenable chromium_experimental_subgroup_matrix;/);
    expect(code.match(/= subgroup_matrix_result<f32, 16, 16>\(\);/g)).toHaveLength(6);
    expect(code.match(/subgroupMatrixMultiplyAccumulate\(/g)).toHaveLength(2 * 6); // two K halves per block
    expect(code).toContain(
      'subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&sa, (warp_m * RM + 1u) * 512u + 16u, 32u)',
    );
    expect(code).toContain(
      'subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, (warp_n * RN + 2u) * 512u + 0u, 32u)',
    );
    expect(code).toContain('@builtin(subgroup_id) warp: u32');
    expect(() => coopmatWgsl({ ...base, arm: 'subgroup-matrix', f16: 'emulated' })).toThrow(
      /needs native f16/,
    );
  });

  it('the two f16 paths differ only in the tile storage; the scalar arm never hardcodes a plane width', () => {
    const emu = coopmatWgsl(base).split('\n');
    const nat = coopmatWgsl({ ...base, f16: 'native' }).split('\n');
    const diff = nat.filter((l) => !emu.includes(l));
    expect(
      diff.every((l) => /f16|^\/\/ (coopmat|f16 operand)|^\/\/ {3}out|fn (put|get)_/.test(l) || l === ''),
    ).toBe(true);
    for (const plane of [4, 16, 64]) {
      const c = coopmatWgsl({ ...base, plane });
      expect(c).toContain(`const PLANE = ${plane}u;`);
      expect(c).toContain(`const PER = ${256 / plane}u;`);
    }
  });

  it('buildCoopmatKernel: bindings, workgroup size, grid with tails, workgroup bytes, instrumented suffix', () => {
    const spec: CoopmatSpec = { ...base, m: 48, n: 80, tile: tile(2, 2, 1, 1), plane: 4 };
    const kc = buildCoopmatKernel(spec);
    expect(kc.bindings).toEqual(['x', 'wqs', 'wsc', 'wd', 'wdm', 'out', 'grid_slice']);
    expect(kc.entryPoint).toBe('main');
    expect(kc.workgroupSize).toBe(16);
    expect(kc.workgroups(48, 80)).toEqual([3, 2, 1]); // ceil(80/32), ceil(48/32)
    expect(kc.workgroups(4096, 512)).toEqual([16, 128, 1]);
    expect(kc.workgroupBytes).toBe((32 * 32 + 32 * 32) * 2);
    expect(kc.wgsl.startsWith(kc.kernelWgsl)).toBe(true);
    expect(kc.wgsl).toContain('fn store_out(i: u32, v: f32) { out[i] = v; }');
    const ki = buildCoopmatKernel(spec, { instrument: true });
    expect(ki.bindings).toEqual(['x', 'wqs', 'wsc', 'wd', 'wdm', 'out', 'grid_slice', 'owner']);
    expect(ki.wgsl).toContain('@group(0) @binding(7) var<storage, read_write> owner_dbg');
    const hand = { tile: tile(2, 2, 4, 4), plane: 32, staging: 'one-pass', k: 256 } as const;
    expect(coopmatWorkgroupBytes({ ...hand, arm: 'scalar' })).toBe(16384); // the hand 128x128 tile
    expect(coopmatWorkgroupBytes({ ...hand, arm: 'subgroup-matrix' })).toBe(16384 + 4 * 1024);
  });

  it('analytic ownership: every element once, lanes < plane, planes < wm*wn, workgroups row-major over the grid', () => {
    const spec: CoopmatSpec = { ...base, m: 40, n: 72, tile: tile(2, 1, 1, 2), plane: 8 };
    const own = coopmatAnalyticOwnership(spec);
    expect(own.count.every((c) => c === 1)).toBe(true);
    expect(Math.max(...own.lane)).toBe(7);
    expect(Math.max(...own.plane)).toBe(1);
    expect(Math.max(...own.workgroup)).toBe(Math.ceil(72 / 32) * Math.ceil(40 / 32) - 1);
    // Element (33, 70): block row 1, block col 2 -> workgroup 1*3 + 2; plane row 0; lane (1*16 + 6) / 32.
    expect([own.workgroup[33 * 72 + 70], own.plane[33 * 72 + 70], own.lane[33 * 72 + 70]]).toEqual([5, 0, 0]);
  });
});

describe('coopmat validation against adapters', () => {
  const config = (
    params: Partial<Record<string, number | string>> = {},
    over: Partial<ResolvedConfig> = {},
  ): ResolvedConfig => ({
    kernel: 'coopmat-f16',
    arm: 'scalar',
    plane: 32,
    data: { source: 'reference', seed: 0 },
    params: { ...coopmatF16Family.defaults, ...params } as FamilyParams,
    ...over,
  });
  const t = (wm: number, wn: number, rm: number, rn: number) => ({ wm, wn, rm, rn });
  const h200 = fakeCaps(
    { shaderF16: true, features: ['subgroups', 'shader-f16', 'chromium-experimental-subgroup-matrix'] },
    [...H200_INT8_CONFIGS, ...H200_F16_CONFIGS],
  );

  it('the matrix arm runs only with shader-f16 and the f16->f32 16x16x16 config, at the hardware plane', () => {
    const m = { arm: 'subgroup-matrix' } as const;
    expect(coopmatF16Family.validate(config({}, m), h200)).toEqual([]);
    const int8Only = fakeCaps({}, H200_INT8_CONFIGS);
    expect(coopmatF16Family.validate(config({}, m), int8Only)).toEqual([
      'the subgroup matrix (f16) arm cannot run here: this adapter has no shader-f16',
    ]);
    const f16NoCfg = fakeCaps({ shaderF16: true }, H200_INT8_CONFIGS);
    expect(coopmatF16Family.validate(config({}, m), f16NoCfg).join()).toMatch(/no f16 -> f32 16x16x16/);
    expect(coopmatF16Family.validate(config({}, { ...m, plane: 16 }), h200).join()).toMatch(
      /plane width must be 32, not 16/,
    );
  });

  it('native f16 where the adapter has shader-f16, emulated otherwise; plans follow; oracle, gate and facts', () => {
    const nat = coopmatF16Family.build(config({ m: 16, n: 16, staging: 'one-pass' }), h200);
    expect(nat.spec.f16).toBe('native');
    expect(nat.plan.passes[0]!.wgsl).toMatch(/^enable f16;/);
    const emu = coopmatF16Family.build(config({ m: 16, n: 16, staging: 'one-pass' }), fakeCaps());
    expect(emu.spec.f16).toBe('emulated');
    expect(emu.plan.passes[0]!.wgsl).toContain('pack2x16float');
    expect(emu.facts.gate).toEqual({ kind: 'rel-to-max', tol: 1e-5 });
    expect(emu.facts.phases).toEqual(['register-accumulator']);
    expect([emu.facts.ops, emu.facts.weightBytes]).toEqual([2 * 16 * 16 * 256, 16 * 144]);
    // The oracle is the exact f16 emulation; the full-precision reference is the f32 GEMM on the
    // unquantized activation and the dequantized weight, and they differ by the f16 rounding.
    const { x, w } = emu.data();
    expect([...emu.facts.oracle()]).toEqual([...mmqQ4kF16RoundedRef(x, w, 16, 16, 256)]);
    const split = relToMax(emu.facts.oracle(), emu.facts.fullPrecision!());
    expect(split).toBeGreaterThan(0);
    expect(split).toBeLessThan(5e-2);
    expect([...emu.facts.oracle([3])]).toEqual([...emu.facts.oracle().subarray(48, 64)]);
    expect(
      coopmatF16Family.build(config({ m: 16, n: 16 }, { arm: 'subgroup-matrix' }), h200).facts.phases,
    ).toEqual(['scalar-epilogue']);
  });

  it('limits come from the plan: workgroup memory, invocations, grid; the register tile from the family', () => {
    const swift = fakeCaps({
      subgroupMinSize: 4,
      subgroupMaxSize: 4,
      limits: {
        maxComputeWorkgroupStorageSize: 32768,
        maxComputeInvocationsPerWorkgroup: 256,
        maxComputeWorkgroupSizeX: 256,
      },
    });
    const plan = (params: Record<string, number | string>, caps = swift, plane = 4) =>
      coopmatPlan(
        {
          m: 64,
          n: 64,
          k: 256,
          plane,
          arm: 'scalar',
          f16: 'emulated',
          staging: 'one-pass',
          tile: t(Number(params.wm), Number(params.wn), Number(params.rm), Number(params.rn)),
        },
        () => coopmatData(64, 64, 256, 'reference', 0),
      ) && planLimitProblems(coopmatF16Family.build(config(params, { plane }), caps).plan, caps.limits);
    expect(plan({ ...t(4, 4, 4, 4), staging: 'one-pass' })).toEqual([]); // 256x256: exactly 32 KiB
    expect(() => plan({ ...t(4, 4, 8, 4), staging: 'one-pass' })).toThrow(
      /49152 bytes of workgroup memory > this adapter's 32768/,
    );
    expect(() => coopmatF16Family.build(config({ ...t(4, 4, 1, 1) }, { plane: 32 }), swift)).toThrow(
      /512 invocations per workgroup > this adapter's 256/,
    );
    expect(coopmatF16Family.validate(config({ ...t(1, 1, 8, 16) }, { plane: 4 }), swift).join()).toMatch(
      /holds 8192 f32 accumulators per lane/,
    );
    const tinyGrid = fakeCaps({ limits: { maxComputeWorkgroupsPerDimension: 4 } });
    expect(() =>
      coopmatF16Family.build(config({ m: 16, n: 80, ...t(1, 1, 1, 1), staging: 'one-pass' }), tinyGrid),
    ).toThrow(/5 workgroups along x > this adapter's 4/);
  });
});
