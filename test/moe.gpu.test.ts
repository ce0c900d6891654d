// The MoE family on Dawn/SwiftShader: the stable slot grouping (moe_expert_rows) and the expert-indexed
// Q4_K MMQ (mmq_q4k_id) against their oracles -- the reference's tests at E=1 plus what its CPU runtime could
// not run: several experts, uneven routing with an idle expert, the grid-stride, ownership.
import { describe, expect, it } from 'vitest';
import { judge } from '../src/kernels/compare';
import type { DataChoice } from '../src/kernels/family';
import { defaultArm } from '../src/kernels/arms';
import type { Arm } from '../src/kernels/gpu/caps';
import { ownershipDiff } from '../src/kernels/gpu/instrument';
import { runPlan } from '../src/kernels/gpu/runner';
import { buildMmqPlan, mmqDataset, mmqPresetSpec, mmqQ4kRef, type MmqSpec } from '../src/kernels/mmq';
import {
  moeExpertRowsPlan,
  moeExpertRowsRef,
  buildMoe,
  moeFamily,
  moeRouting,
  moeRoutingWords,
  splitRouting,
  type MoeOverrides,
} from '../src/kernels/moe';
import { configOf } from './configs';
import { BIT, openKernelHarness, REL, SEED_TAIL_SHAPES } from './kernelHarness';

const { device, caps, planeFor, perArm, runOut, check, recordOwnership } = await openKernelHarness('moe gpu');
/** The reference test's routing: deliberately uneven, expert 3 never chosen, expert 0 most. */
const SEED_IDS = new Uint32Array([0, 2, 0, 4, 1, 0, 2, 4, 0, 1, 2, 0]);

const config = (
  arm: Arm,
  params: Record<string, number>,
  data: DataChoice = { source: 'reference', seed: 0 },
) => configOf(moeFamily, caps, params, { arm, plane: planeFor(arm), data });

/** Build, run and gate one routed problem; returns the built problem and its output. */
async function runMoe(arm: Arm, params: Record<string, number>, o: MoeOverrides = {}, data?: DataChoice) {
  const p = buildMoe(config(arm, params, data), caps, o);
  const got = await runOut(p.plan);
  const pr = p.problem;
  check(
    got,
    p.facts.oracle() as Float32Array,
    REL,
    `moe E${pr.experts} top${pr.topk} ${pr.tokens}x${pr.n}x${pr.k} ytiles ${pr.ytiles} ${arm}`,
  );
  return { p, got };
}
const ARM = defaultArm(moeFamily, caps, moeFamily.defaults);

describe('moe_expert_rows', () => {
  async function group(ids: Uint32Array, experts: number, cap: number) {
    // Start dirty: the kernel must zero the counts itself (the lists start 0, as moeExpertRowsRef's).
    const routing = new Uint32Array(moeRoutingWords(experts, cap));
    routing.fill(7, 0, experts);
    const plan = moeExpertRowsPlan(ids, experts, cap, routing);
    const r = await runPlan(device, plan);
    return splitRouting(new Uint32Array(r.output), experts, cap);
  }

  it('groups the seed ids stably: 5 experts, cap 8, every slot once, ascending lists', async () => {
    const { counts, rows } = await group(SEED_IDS, 5, 8);
    const want: number[][] = [[], [], [], [], []];
    SEED_IDS.forEach((e, s) => want[e]!.push(s));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(SEED_IDS.length);
    for (let e = 0; e < 5; e++) {
      expect(counts[e], `expert ${e} count`).toBe(want[e]!.length);
      expect(Array.from(rows.subarray(e * 8, e * 8 + want[e]!.length)), `expert ${e} list`).toEqual(want[e]);
    }
    const ref = moeExpertRowsRef(SEED_IDS, 5, 8);
    expect(Array.from(counts)).toEqual(Array.from(ref.counts));
    expect(Array.from(rows)).toEqual(Array.from(ref.rows));
  });

  it('matches moeExpertRowsRef on seeded top-2 routing over 8 experts (more slots than threads)', async () => {
    const ids = moeRouting(100, 8, 2, 0x1234n);
    const { counts, rows } = await group(ids, 8, 100);
    const ref = moeExpertRowsRef(ids, 8, 100);
    expect(Array.from(counts)).toEqual(Array.from(ref.counts));
    expect(Array.from(rows)).toEqual(Array.from(ref.rows));
  });
});

describe('mmq-q4k-id (mmq_q4k_id)', () => {
  perArm('matches mmqQ4kIdRef with tails at E=1', async (arm) => {
    for (const [m, n, k] of SEED_TAIL_SHAPES) {
      await runMoe(arm, { tokens: m, n, k, experts: 1, topk: 1, ytiles: Math.ceil(m / 32) });
    }
  });

  perArm('is bit-identical to mmq-q4k-rt at E=1 with identity routing (32x64x512)', async (arm) => {
    const [m, n, k] = [32, 64, 512];
    const { got } = await runMoe(arm, { tokens: m, n, k, experts: 1, topk: 1, ytiles: 1 });
    const ds = mmqDataset('q4k', m, n, k, 'reference', 0);
    const rt = await runOut(
      buildMmqPlan(ds.inputs, m, n, k, mmqPresetSpec('mmq-q4k-rt', { m, n, k, arm, plane: planeFor(arm) })),
    );
    expect(judge(got, rt, BIT).mismatches).toBe(0);
    if (ds.inputs.weights === 'q4k') check(rt, mmqQ4kRef(ds.inputs.data, m, n, k), REL, 'rt reference');
  });

  perArm('grid-stride covers every row: 128 slots on ytiles 1..4', async (arm) => {
    for (const ytiles of [1, 2, 3, 4])
      await runMoe(arm, { tokens: 128, n: 64, k: 256, experts: 1, topk: 1, ytiles });
  });

  perArm('8 experts, top-2 routing, 40 tokens x 100 x 256 (tails, multi-expert grid)', async (arm) => {
    await runMoe(arm, { tokens: 40, n: 100, k: 256, experts: 8, topk: 2, ytiles: 2 });
  });

  perArm("the seed's uneven routing: an idle expert, one expert with 5 of 12 slots", async (arm) => {
    await runMoe(
      arm,
      { tokens: 12, n: 64, k: 256, experts: 5, topk: 1, ytiles: 1 },
      { ids: SEED_IDS, cap: 8 },
    );
  });

  it("the generator's indexed Q8_0 variant: 8 experts top-2, 16 tokens x 64 x 64", async () => {
    const arm = ARM;
    const spec: MmqSpec = {
      ...mmqPresetSpec('mmq-q4k-id', { m: 0, n: 0, k: 0, arm, plane: planeFor(arm) }),
      weights: 'q8_0',
    };
    const { p } = await runMoe(arm, { tokens: 16, n: 64, k: 256, experts: 8, topk: 2, ytiles: 1 }, { spec });
    // The override is what ran: Q8_0 weights, not the preset's Q4_K.
    expect(p.spec.weights).toBe('q8_0');
    expect(p.plan.buffers.find((b) => b.role === 'weight')?.name).toBe('wq');
  });

  it('the family on random data (defaults: 32 tokens, 8 experts top-2, 128 x 512) passes its gate', async () => {
    const arm = ARM;
    const data: DataChoice = { source: 'random', seed: 3 };
    expect(moeFamily.validate(config(arm, {}, data), caps)).toEqual([]);
    const { p } = await runMoe(arm, {}, {}, data);
    const quant = judge(p.facts.oracle() as Float32Array, p.facts.fullPrecision!(), REL);
    console.log(
      `[moe gpu] family defaults ${arm}: quantization rel ${quant.relToMax.toExponential(2)}, weight bytes ${p.facts.weightBytes}`,
    );
    expect(quant.relToMax).toBeLessThan(0.1);
  });

  it('ownership: the instrumented run equals the analytic map (8 experts top-2, ytiles 2)', async () => {
    const p = buildMoe(config(ARM, { tokens: 40, n: 100, k: 256, experts: 8, topk: 2, ytiles: 2 }), caps);
    const { own, output } = await recordOwnership(p);
    expect(ownershipDiff(own, p.facts.analyticOwnership('scalar-epilogue'))).toBe(0);
    check(output, p.facts.oracle() as Float32Array, REL, 'instrumented');
  });
});
