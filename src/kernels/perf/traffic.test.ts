// Bytes moved per pass for EVERY registered family at its small shape, computed here by hand from the
// formats (int8 = 1 B, f32 = 4 B, f16 = 2 B; Q8_0: a f32 scale per 32; Q4_K: k/2 nibble bytes, 12 scale
// bytes and two f32 per 256; q8_1 activations: a f32 scale and sum per 32) -- so a family whose plan
// starts binding more (or less) than its op needs fails here.
import { describe, expect, it } from 'vitest';
import { KERNELS } from '../index';
import type { FamilyParams } from '../family';
import { fakeCaps } from '../gpu/testCaps';
import { planTraffic, totalTraffic } from './traffic';

const caps = fakeCaps({ shaderF16: true });

function traffic(kernel: string, params: FamilyParams = {}) {
  const f = KERNELS.get(kernel);
  const built = f.build(
    {
      kernel,
      arm: 'scalar',
      plane: 32,
      data: { source: 'synthetic', seed: 1 },
      params: { ...f.defaults, ...f.small, ...params },
    },
    caps,
  );
  return { passes: planTraffic(built.plan, built.facts.ops), ops: built.facts.ops };
}
/** [read, write] bytes of each pass. */
const rw = (t: ReturnType<typeof traffic>) => t.passes.map((p) => [p.readBytes, p.writeBytes]);

// Q4_K weight bytes of an [n, k] matrix: nibbles, 12 scale bytes and d + dmin (2 f32) per 256.
const q4k = (n: number, k: number) => n * (k / 2) + n * (k / 256) * 12 + n * (k / 256) * 8;
// q8_1 activation of [m, k]: int8 codes plus a scale and a sum (2 f32) per 32.
const q8_1 = (m: number, k: number) => m * k + m * (k / 32) * 8;

/** Hand-computed [read, write] per pass, per family id (the small shape of each catalog). */
const EXPECTED: Record<string, { params?: FamilyParams; passes: [number, number][]; ops: number }[]> = {
  // 16x16x16 int8: A 256 B, B 256 B in; 16x16 i32 out.
  'hello-wmma': [{ passes: [[256 + 256, 16 * 16 * 4]], ops: 2 * 16 * 16 * 16 }],
  // A 16x32 int8, B 32x8 int8; 16x8 i32 out.
  'hello-mma': [{ passes: [[512 + 256, 16 * 8 * 4]], ops: 2 * 16 * 8 * 32 }],
  // m32 n32 k64, Q8_0 weight (codes + f32 scale per 32) and q8_0 activation (codes + f32 scale per 32).
  'mmq-q8-naive': [
    { passes: [[32 * 64 + 32 * 2 * 4 + 32 * 64 + 32 * 2 * 4, 32 * 32 * 4]], ops: 2 * 32 * 32 * 64 },
  ],
  'mmq-q8-tiled': [
    { passes: [[32 * 64 + 32 * 2 * 4 + 64 * 64 + 64 * 2 * 4, 32 * 64 * 4]], ops: 2 * 32 * 64 * 64 },
  ],
  'mmq-q4k-blk': [{ passes: [[q8_1(32, 256) + q4k(64, 256), 32 * 64 * 4]], ops: 2 * 32 * 64 * 256 }],
  // The runtime-dims kernel's `dims` uniform is parameters, not traffic.
  'mmq-q4k-rt': [{ passes: [[q8_1(17, 256) + q4k(50, 256), 17 * 50 * 4]], ops: 2 * 17 * 50 * 256 }],
  // One pass: q8_1 rows and the Q4_K weight in, [2, 64] f32 out (the grid slice is the runner's uniform).
  'matvec-q4k': [{ passes: [[q8_1(2, 256) + q4k(64, 256), 2 * 64 * 4]], ops: 2 * 2 * 64 * 256 }],
  'mmq-q4k-tile': [{ passes: [[q8_1(20, 256) + q4k(40, 256), 20 * 40 * 4]], ops: 2 * 20 * 40 * 256 }],
  // tokens 8, top-2 of 4 experts: 16 slots; every expert's Q4_K bank of [64, 256] is bound.
  'moe-q4k-id': [
    {
      params: { route: 'int8', staging: 'prepass' },
      passes: [
        // ids (16 slots x u32) in; routing table out: counts [4] + slot lists [4 x cap 8] words.
        [16 * 4, (4 + 4 * 8) * 4],
        // q8_1 activations per slot, the 4 experts' weights, the routing table in; [16, 64] f32 out.
        [q8_1(16, 256) + 4 * q4k(64, 256) + (4 + 4 * 8) * 4, 16 * 64 * 4],
      ],
      ops: 2 * 16 * 64 * 256,
    },
    {
      params: { route: 'f16', staging: 'prepass' },
      // Row tiles: ceil(16 / 32) + min(4, 16) = 5 of bm 32; the groups table 1 + 5 + 5 x 32 words;
      // f16 prepass outputs carry 2048 B of slack.
      passes: [
        [16 * 4, (1 + 5 + 5 * 32) * 4],
        [4 * (64 * 128 + 64 * 12) + 4 * 64 * 4 * 2, 4 * 64 * 256 * 2 + 2048],
        [16 * 256 * 4 + (1 + 5 + 5 * 32) * 4, 5 * 32 * 256 * 2 + 2048],
        [5 * 32 * 256 * 2 + 2048 + 4 * 64 * 256 * 2 + 2048 + (1 + 5 + 5 * 32) * 4, 16 * 64 * 4],
      ],
      ops: 2 * 16 * 64 * 256,
    },
  ],
  // m32 n32 k256: f32 activation, Q4_K weight with d and dmin as separate f32 buffers.
  'coopmat-f16': [
    {
      params: { staging: 'one-pass' },
      passes: [[32 * 256 * 4 + q4k(32, 256), 32 * 32 * 4]],
      ops: 2 * 32 * 32 * 256,
    },
    {
      params: { staging: 'prepass' },
      passes: [
        [q4k(32, 256), 32 * 256 * 2 + 2048],
        [32 * 256 * 4, 32 * 256 * 2 + 2048],
        [2 * (32 * 256 * 2 + 2048), 32 * 32 * 4],
      ],
      ops: 2 * 32 * 32 * 256,
    },
  ],
};

describe('bytes moved per pass (planTraffic)', () => {
  it('has a hand-computed case for every registered family', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual([...KERNELS.ids].sort());
  });
  for (const [id, cases] of Object.entries(EXPECTED))
    for (const c of cases)
      it(`${id} ${JSON.stringify(c.params ?? {})}`, () => {
        const t = traffic(id, c.params);
        expect(rw(t)).toEqual(c.passes);
        expect(t.passes.map((p) => p.bytes)).toEqual(c.passes.map(([r, w]) => r + w));
        expect(t.ops).toBe(c.ops);
        // The op's operations sit on the main pass; the total adds up.
        const total = totalTraffic(t.passes);
        expect(total.ops).toBe(c.ops);
        expect(total.bytes).toBe(c.passes.flat().reduce((a, b) => a + b, 0));
      });

  it('splits the bytes by role: weights, activations, output, intermediates', () => {
    const t = totalTraffic(traffic('coopmat-f16', { staging: 'prepass' }).passes);
    expect(t.byRole).toEqual({
      weight: q4k(32, 256),
      activation: 32 * 256 * 4,
      output: 32 * 32 * 4,
      // wh and xt: written once, read once.
      intermediate: 2 * 2 * (32 * 256 * 2 + 2048),
    });
  });

  it('refuses a pass that binds a buffer the plan lacks', () => {
    const plan = KERNELS.get('hello-wmma').build(
      { kernel: 'hello-wmma', arm: 'scalar', plane: 32, data: { source: 'reference', seed: 0 }, params: {} },
      caps,
    ).plan;
    const broken = { ...plan, passes: [{ ...plan.passes[0]!, bindings: ['a', 'nope'] }] };
    expect(() => planTraffic(broken, 1)).toThrow(/binds nope/);
  });
});
