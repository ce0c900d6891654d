// Tests that kill mutants scripts/mutate.ts found surviving: the gates' contract (one differing bit
// fails a bit-exact gate; a NaN or an infinity makes rel_to_max infinite), the f32 GEMM's per-product
// rounding, the MoE grouping kernel's guards against malformed routing, and the MoE grid-stride storing
// each output element once when an expert has more row tiles than the grid.
import { describe, expect, it } from 'vitest';
import { judge, relToMax } from '../src/kernels/compare';
import { ownershipDiff } from '../src/kernels/gpu/instrument';
import { runPlan } from '../src/kernels/gpu/runner';
import {
  buildMoe,
  moeExpertRowsPlan,
  moeExpertRowsRef,
  moeFamily,
  moeRoutingWords,
  splitRouting,
} from '../src/kernels/moe';
import { gemmF32 } from '../src/kernels/oracle';
import { configOf } from './configs';
import { openKernelHarness, REL } from './kernelHarness';

const { device, caps, planeFor, check, recordOwnership } = await openKernelHarness('mutants');

describe('gates', () => {
  it('a bit-exact gate fails on ONE differing element, and tells -0 from +0', () => {
    const want = new Float32Array([1, 2, 3, 0]);
    const one = new Float32Array([1, 2, 3.0000002, 0]);
    expect(judge(one, want, { kind: 'bit-exact' })).toMatchObject({
      pass: false,
      mismatches: 1,
      firstBad: [2],
    });
    const negZero = new Float32Array([1, 2, 3, -0]);
    expect(judge(negZero, want, { kind: 'bit-exact' })).toMatchObject({ pass: false, mismatches: 1 });
    expect(judge(new Int32Array([5, 6]), new Int32Array([5, 7]), { kind: 'bit-exact' }).pass).toBe(false);
    expect(judge(want.slice(), want, { kind: 'bit-exact' }).pass).toBe(true);
  });

  it('rel_to_max is Infinity (never NaN) when the output holds a NaN or an infinity, so no gate passes it', () => {
    const want = new Float32Array([1, 2]);
    expect(relToMax(new Float32Array([NaN, 2]), want)).toBe(Infinity);
    expect(relToMax(new Float32Array([1, -Infinity]), want)).toBe(Infinity);
    expect(judge(new Float32Array([1, NaN]), want, { kind: 'rel-to-max', tol: 1 }).pass).toBe(false);
  });
});

describe('gemmF32 (the full-precision reference)', () => {
  it('rounds each product to f32 before it adds: (1 + 2^-12)^2 - 1 is 2^-11, not 2^-11 + 2^-24', () => {
    // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 rounds (a tie, to even) to 1 + 2^-11 in f32; added to -1 first it
    // would be exact.
    const x = new Float32Array([1, 1 + 2 ** -12]);
    const w = new Float32Array([-1, 1 + 2 ** -12]);
    expect(gemmF32(x, w, 1, 1, 2)[0]).toBe(2 ** -11);
  });
});

describe('moe_expert_rows on malformed routing (the kernel guards, as moeExpertRowsRef does)', () => {
  it('caps an overfull expert at `cap` and skips out-of-range ids, writing nothing past its lists', async () => {
    // Expert 0 is routed 5 slots with cap 3; ids 7 and 5 are out of range for 5 experts.
    const ids = new Uint32Array([0, 2, 0, 7, 0, 1, 0, 5, 0, 2]);
    const [experts, cap] = [5, 3];
    const routing = new Uint32Array(moeRoutingWords(experts, cap)).fill(0xdead);
    const plan = moeExpertRowsPlan(ids, experts, cap, routing);
    const got = splitRouting(new Uint32Array((await runPlan(device, plan)).output), experts, cap);
    const want = moeExpertRowsRef(ids, experts, cap);
    expect(Array.from(got.counts)).toEqual([3, 1, 2, 0, 0]);
    expect(Array.from(got.counts)).toEqual(Array.from(want.counts));
    // Each expert's list up to its count; the entries beyond keep the buffer's 0xdead (never written).
    for (let e = 0; e < experts; e++) {
      const list = Array.from(got.rows.subarray(e * cap, (e + 1) * cap));
      expect(list.slice(0, got.counts[e]), `expert ${e}`).toEqual(
        Array.from(want.rows.subarray(e * cap, e * cap + want.counts[e]!)),
      );
      expect(list.slice(got.counts[e]), `expert ${e} past its count`).toEqual(
        new Array(cap - got.counts[e]!).fill(0xdead),
      );
    }
  });
});

describe('moe-q4k-id grid-stride', () => {
  it('stores every element exactly once when each expert has 4 row tiles and the grid 2 (2 experts x 100 rows)', async () => {
    const arm = caps.dot4I8Packed ? 'dp4a' : 'scalar';
    const params = { tokens: 100, n: 64, k: 256, experts: 2, topk: 2, ytiles: 2 };
    const p = buildMoe(configOf(moeFamily, caps, params, { arm, plane: planeFor(arm) }), caps);
    // recordOwnership asserts a store count of exactly 1 for every element.
    const { own, output } = await recordOwnership(p);
    expect(ownershipDiff(own, p.facts.analyticOwnership('scalar-epilogue'), { counts: true })).toBe(0);
    check(output, p.facts.oracle() as Float32Array, REL, 'moe grid-stride');
  });
});
