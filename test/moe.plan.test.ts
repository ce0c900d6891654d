// Node tier for the MoE family: the grouping oracle, seeded routing, the two-pass plan, and shape /
// routing preconditions rejected with ShapeError before any dispatch.
import { describe, expect, it } from 'vitest';
import { ShapeError, type ResolvedConfig } from '../src/kernels/family';
import { SWIFTSHADER_CAPS as caps } from '../src/kernels/gpu/testCaps';
import {
  buildMoePlan,
  moeAnalyticOwnership,
  moeExpertRowsRef,
  moeFamily,
  moeProblemOf,
  moeRouting,
  buildMoe,
  usedExperts,
  type MoeProblem,
} from '../src/kernels/moe';
import { mmqDataset, mmqPresetSpec } from '../src/kernels/mmq';

const config = (params: Record<string, number> = {}, over: Partial<ResolvedConfig> = {}): ResolvedConfig => ({
  kernel: 'moe-q4k-id',
  arm: 'dp4a',
  plane: 4,
  data: { source: 'reference', seed: 0 },
  params: { ...moeFamily.defaults, ...params },
  ...over,
});
const SEED_IDS = new Uint32Array([0, 2, 0, 4, 1, 0, 2, 4, 0, 1, 2, 0]);

describe('moeExpertRowsRef', () => {
  it('groups the seed ids stably (expert 3 idle, expert 0 has 5 slots)', () => {
    const { counts, rows } = moeExpertRowsRef(SEED_IDS, 5, 8);
    expect(Array.from(counts)).toEqual([5, 2, 3, 0, 2]);
    expect(Array.from(rows.subarray(0, 5))).toEqual([0, 2, 5, 8, 11]);
    expect(Array.from(rows.subarray(8, 10))).toEqual([4, 9]);
    expect(Array.from(rows.subarray(16, 19))).toEqual([1, 6, 10]);
    expect(Array.from(rows.subarray(32, 34))).toEqual([3, 7]);
  });
  it('caps an overfull expert and skips out-of-range ids, as the kernel guards do', () => {
    const { counts, rows } = moeExpertRowsRef([1, 1, 1, 9], 2, 2);
    expect(Array.from(counts)).toEqual([0, 2]);
    expect(Array.from(rows)).toEqual([0, 0, 0, 1]);
  });
});

describe('moeRouting', () => {
  it('is deterministic, picks topk DISTINCT experts per token, and covers the experts', () => {
    const ids = moeRouting(64, 8, 2, 42n);
    expect(Array.from(ids)).toEqual(Array.from(moeRouting(64, 8, 2, 42n)));
    expect(Array.from(ids)).not.toEqual(Array.from(moeRouting(64, 8, 2, 43n)));
    for (let t = 0; t < 64; t++) expect(ids[2 * t]).not.toBe(ids[2 * t + 1]);
    expect(usedExperts(ids, 8)).toBe(8);
    expect(Math.max(...moeExpertRowsRef(ids, 8, 64).counts)).toBeLessThanOrEqual(64); // cap = tokens is exact
    expect(Array.from(moeRouting(3, 4, 4, 1n).subarray(0, 4)).sort()).toEqual([0, 1, 2, 3]);
  });
});

describe('the two-pass plan', () => {
  it('groups, then runs the indexed GEMM over (n-tiles, ytiles, experts) as the main pass', () => {
    const c = config({ tokens: 40, n: 100, k: 256, experts: 8, topk: 2, ytiles: 2 });
    const p = buildMoe(c, caps);
    expect(p.plan.passes.map((x) => x.label)).toEqual(['moe_expert_rows', 'moe-q4k-id']);
    expect(p.plan.mainPass).toBe(1);
    expect(p.plan.passes[1]!.workgroups).toEqual([2, 2, 8]);
    expect([p.facts.rows, p.facts.cols, p.facts.ops]).toEqual([80, 100, 2 * 80 * 100 * 256]);
    const own = moeAnalyticOwnership(p.spec, p.problem);
    expect(own.count.every((v) => v === 1)).toBe(true);
  });
  it('the E=1 problem with identity routing has the dense rt ownership shape', () => {
    const p = moeProblemOf(config({ tokens: 64, n: 64, k: 256, experts: 1, topk: 1, ytiles: 1 }));
    const own = moeAnalyticOwnership(
      mmqPresetSpec('mmq-q4k-id', { m: 0, n: 0, k: 0, arm: 'dp4a', plane: 4 }),
      p,
    );
    // rows 0..31 are tile 0, rows 32..63 tile 0 again on the grid-stride (ytiles 1): same workgroup.
    expect(own.workgroup[0]).toBe(own.workgroup[32 * 64]);
  });
});

describe('preconditions throw ShapeError before any dispatch', () => {
  it('routing: ids out of range, an expert over cap, topk > experts', () => {
    expect(() =>
      buildMoe(config({ tokens: 12, topk: 1, experts: 4 }), caps, { ids: SEED_IDS, cap: 8 }),
    ).toThrow(/ids\[3\] = 4 is not an expert \(0\.\.3\)/);
    expect(() =>
      buildMoe(config({ tokens: 12, topk: 1, experts: 5 }), caps, { ids: SEED_IDS, cap: 4 }),
    ).toThrow(/an expert has 5 slots > cap 4/);
    // A cap the busiest expert fills exactly drops nothing.
    expect(() =>
      buildMoe(config({ tokens: 12, topk: 1, experts: 5 }), caps, { ids: SEED_IDS, cap: 5 }),
    ).not.toThrow();
    // One message for one problem: no follow-on complaint about the routing it makes impossible.
    expect(moeFamily.validate(config({ topk: 9, experts: 8 }), caps)).toEqual([
      "top-k = 9 > experts = 8: each token's experts must be distinct",
    ]);
    expect(() => moeFamily.build(config({ topk: 9, experts: 8 }), caps)).toThrow(ShapeError);
  });
  it('shape: k a Q4_K super-block multiple; the ids length must be tokens*topk', () => {
    expect(moeFamily.validate(config({ k: 300 }), caps).join()).toMatch(/k = 300 is not a multiple of 256/);
    const ds = mmqDataset('q4k', 4, 64, 256, 'reference', 0);
    const spec = mmqPresetSpec('mmq-q4k-id', { m: 0, n: 0, k: 0, arm: 'dp4a', plane: 4 });
    const bad: MoeProblem = {
      tokens: 4,
      topk: 1,
      experts: 1,
      n: 64,
      k: 256,
      ids: new Uint32Array(3),
      cap: 4,
      ytiles: 1,
    };
    expect(() => buildMoePlan(ds.inputs, bad, spec)).toThrow(/ids has 3 entries, expected tokens\*topk = 4/);
    expect(() =>
      buildMoePlan(ds.inputs, { ...bad, ids: new Uint32Array(4) }, { ...spec, indexed: false }),
    ).toThrow(/indexed spec/);
  });
  it('buffers must fit maxStorageBufferBindingSize (checked from the plan)', () => {
    const small = { ...caps, limits: { ...caps.limits, maxStorageBufferBindingSize: 1 << 20 } };
    expect(() => moeFamily.build(config({ experts: 64, n: 1024, k: 1024 }), small)).toThrow(
      /buffer wqs is 33554432 bytes > this adapter's 1048576 \(maxStorageBufferBindingSize\)/,
    );
  });
  it('the subgroup-matrix arm is refused on an adapter without it, with the reason', () => {
    expect(moeFamily.validate(config({}, { arm: 'subgroup-matrix', plane: 4 }), caps).join()).toMatch(
      /has no subgroup matrices \(chromium-experimental-subgroup-matrix/,
    );
  });
});
