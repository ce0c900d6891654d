// The MoE family's f16 route on Dawn/SwiftShader: the routing table (expert tiles in order, each
// expert's slots ascending), the gathered f16 rows, and the per-expert split GEMM -- the scalar arm bit
// for bit against the f16-rounded per-expert emulation, and within the f16 gate of the reference's own
// MoE oracle (mmq_q4k_id on the q8_1-quantized activation). Uneven routing, idle experts, tails.
import { describe, expect, it } from 'vitest';
import { bitMismatches, judge } from '../src/kernels/compare';
import { COOPMAT_REFERENCE_GATE } from '../src/kernels/coopmat';
import type { DataChoice } from '../src/kernels/family';
import { ownershipDiff } from '../src/kernels/gpu/instrument';
import { runPlan } from '../src/kernels/gpu/runner';
import { mmqQ4kIdRef } from '../src/kernels/moe';
import { moeRoutedRows, ROUTED_NONE, routedTable } from '../src/kernels/moe/moe.f16';
import { buildMoeF16, moeFamily, type MoeOverrides } from '../src/kernels/moe/moe.family';
import { quantizeQ8_1 } from '../src/kernels/quant';
import { configOf } from './configs';
import { openKernelHarness } from './kernelHarness';

const { device, caps, planeFor, runOut, recordOwnership } = await openKernelHarness('moe f16');

const f16Config = (
  params: Record<string, number | string>,
  data: DataChoice = { source: 'random', seed: 5 },
) =>
  configOf(moeFamily, caps, { route: 'f16', ...params }, { arm: 'scalar', plane: planeFor('scalar'), data });

/** The reference test's routing: deliberately uneven, expert 3 never chosen, expert 0 most. */
const SEED_IDS = new Uint32Array([0, 2, 0, 4, 1, 0, 2, 4, 0, 1, 2, 0]);

async function runF16(params: Record<string, number | string>, o: MoeOverrides = {}, data?: DataChoice) {
  const b = buildMoeF16(f16Config(params, data), caps, o);
  const got = await runOut(b.plan);
  const label = `f16 route E${b.problem.experts} top${b.problem.topk} ${b.problem.tokens}x${b.problem.n}x${b.problem.k} ${String(params.staging)}`;
  expect(bitMismatches(got, b.facts.oracle() as Float32Array), label).toEqual([]);
  return { b, got, label };
}

describe('MoE f16 route', () => {
  it('routing table: tiles in use, each tile one expert in order, slots ascending, NONE to the tile end', async () => {
    const b = buildMoeF16(f16Config({ tokens: 12, topk: 1, experts: 5, n: 16, k: 256 }), caps, {
      ids: SEED_IDS,
      cap: 12,
    });
    const bm = b.spec.tile.wm * b.spec.tile.rm * 16;
    const t = routedTable(b.tiles, bm);
    const routeOnly = {
      ...b.plan,
      passes: b.plan.passes.slice(0, 1),
      output: 'groups',
      outputType: 'u32' as const,
      mainPass: 0,
    };
    const groups = new Uint32Array((await runPlan(device, routeOnly)).output);
    // Experts 0 (5 slots), 1 (2), 2 (3), 4 (2): one tile each at BM >= 16; expert 3 has none.
    expect(groups[0]).toBe(4);
    expect([...groups.subarray(t.expertAt, t.expertAt + 4)]).toEqual([0, 1, 2, 4]);
    const rows = [...groups.subarray(t.slotAt, t.slotAt + 4 * bm)];
    expect(rows.slice(0, 6)).toEqual([0, 2, 5, 8, 11, ROUTED_NONE]);
    expect(rows.slice(bm, bm + 3)).toEqual([4, 9, ROUTED_NONE]);
    expect(rows.slice(2 * bm, 2 * bm + 4)).toEqual([1, 6, 10, ROUTED_NONE]);
    expect(rows.slice(3 * bm, 3 * bm + 3)).toEqual([3, 7, ROUTED_NONE]);
    // The CPU's map of slots to routed rows agrees with the GPU's table.
    const rowOf = moeRoutedRows(SEED_IDS, 5, bm);
    for (let s = 0; s < SEED_IDS.length; s++) expect(groups[t.slotAt + rowOf[s]!]).toBe(s);
  });

  it('every staging, tails and several row tiles per expert, bit-exact vs the per-expert f16 emulation', async () => {
    for (const [params, o] of [
      [
        { tokens: 12, topk: 1, experts: 5, n: 24, k: 256, staging: 'prepass' },
        { ids: SEED_IDS, cap: 12 },
      ],
      [
        { tokens: 12, topk: 1, experts: 5, n: 24, k: 256, staging: 'in-gemm' },
        { ids: SEED_IDS, cap: 12 },
      ],
      [{ tokens: 40, topk: 2, experts: 6, n: 40, k: 512, staging: 'fused-prepass', wm: 1, wn: 2 }, {}],
      [{ tokens: 70, topk: 2, experts: 3, n: 50, k: 256, staging: 'in-gemm', wm: 1, wn: 1 }, {}],
    ] as const) {
      const { b, got, label } = await runF16(params, o);
      // Within the f16 gate of the reference's MoE oracle: q8_1 activation x Q4_K, per slot's expert.
      const { x, w } = b.data();
      const slots = b.problem.tokens * b.problem.topk;
      const q = quantizeQ8_1(x, slots, b.problem.k).split;
      const ref = mmqQ4kIdRef(
        { xq: q.q, xs: q.d, xsum: q.s, w },
        b.problem.ids,
        slots,
        b.problem.n,
        b.problem.k,
      );
      const v = judge(got, ref, COOPMAT_REFERENCE_GATE);
      expect(v.pass, `${label} vs mmq_q4k_id_ref: ${v.relToMax}`).toBe(true);
    }
  });

  it('stream staging: K parts per workgroup, 16-row tiles, a hot expert on several tiles, bit-exact; ownership', async () => {
    for (const params of [
      {
        tokens: 40,
        topk: 2,
        experts: 6,
        n: 40,
        k: 512,
        wm: 1,
        wn: 1,
        rm: 1,
        rn: 1,
        ksplit: 2,
        routing: 'skewed',
      },
      { tokens: 9, topk: 2, experts: 4, n: 32, k: 1024, wm: 1, wn: 1, rm: 2, rn: 2, ksplit: 4 },
    ] as const) {
      const { b } = await runF16({ ...params, staging: 'stream' });
      expect(b.plan.passes.map((p) => p.label)).toEqual([
        'moe route tiles',
        'moe f16 activation to f16 tiles',
        expect.stringMatching(new RegExp(` stream ${params.ksplit} parts$`)),
      ]);
      const { own } = await recordOwnership(b);
      expect(ownershipDiff(own, b.facts.analyticOwnership('scalar-epilogue'))).toBe(0);
    }
    // The skewed case really is skewed: expert 0 serves more than twice its even share and spans tiles.
    const skewed = buildMoeF16(
      f16Config({
        tokens: 40,
        topk: 2,
        experts: 6,
        n: 40,
        k: 512,
        wm: 1,
        wn: 1,
        rm: 1,
        rn: 1,
        routing: 'skewed',
        staging: 'stream',
      }),
      caps,
    );
    const hot = skewed.problem.ids.filter((e) => e === 0).length;
    expect(hot).toBeGreaterThan((2 * 80) / 6);
    expect(hot).toBeGreaterThan(16);
  });

  it('the family builds the f16 route from the route param, on reference data, with the right arithmetic', async () => {
    const c = f16Config({ tokens: 16, n: 32, k: 256, experts: 4, topk: 2 }, { source: 'reference', seed: 0 });
    const b = moeFamily.build(c, caps);
    expect(b.facts.arithmetic).toBe('f16');
    expect(b.plan.passes.map((p) => p.label)).toEqual([
      'moe route tiles',
      'moe f16 weight Q4_K to f16',
      'moe f16 activation to f16 tiles',
      expect.stringMatching(/^moe f16 GEMM scalar /),
    ]);
    const got = await runOut(b.plan);
    expect(bitMismatches(got, b.facts.oracle() as Float32Array)).toEqual([]);
    // Sampled rows of the oracle are the same rows of the whole.
    const some = [0, 5, 31];
    const all = b.facts.oracle() as Float32Array;
    expect([...(b.facts.oracle(some) as Float32Array)]).toEqual(
      some.flatMap((r) => [...all.subarray(r * 32, r * 32 + 32)]),
    );
  });

  it('ownership: the instrumented run equals the analytic map (slots scattered through the table)', async () => {
    const b = buildMoeF16(
      f16Config({ tokens: 30, topk: 2, experts: 5, n: 40, k: 256, staging: 'in-gemm' }),
      caps,
    );
    const { own, output } = await recordOwnership(b);
    expect(ownershipDiff(own, b.facts.analyticOwnership('register-accumulator'))).toBe(0);
    expect(bitMismatches(output, b.facts.oracle() as Float32Array)).toEqual([]);
  });

  it('refuses what the f16 route cannot run: the dp4a arm, too many experts', () => {
    const c = f16Config({ tokens: 16, n: 32, k: 256, experts: 4, topk: 2 });
    expect(moeFamily.validate({ ...c, arm: 'dp4a' }, caps).join()).toMatch(
      /the f16 route runs on the scalar and the f16 subgroup-matrix arms/,
    );
    expect(moeFamily.validate({ ...c, params: { ...c.params, experts: 4000 } }, caps).join()).toMatch(
      /the f16 route groups at most 2048/,
    );
  });
});
