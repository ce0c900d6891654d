import { describe, expect, it } from 'vitest';
import { CATALOG } from '../catalog';
import { fakeCaps, H200_F16_CONFIGS, H200_INT8_CONFIGS, SWIFTSHADER_CAPS } from '../gpu/testCaps';
import { DEFAULT_RATES, estimate, rateFor, workOf } from '../perf/estimate';
import {
  estimatePick,
  estimatePicks,
  guessPick,
  pickBase,
  pickCatalogs,
  pickProblem,
  settlePick,
  storedPickOf,
  type PickCandidate,
  type PickGemm,
} from './pick';
import { tuneProblemKey } from './problem';

const H200 = fakeCaps({ shaderF16: true }, [...H200_INT8_CONFIGS, ...H200_F16_CONFIGS]);
const dense = (rows: number): PickGemm => ({ type: 'Q4_K', n: 4096, k: 4096, rows });
const ids = (xs: readonly { id: string }[]) => xs.map((x) => x.id);

describe('the candidates of a GEMM', () => {
  it("are the families whose `takes` is the weight's format and kind", () => {
    const f = CATALOG.families;
    expect(ids(pickCatalogs(f, dense(1)))).toEqual([
      'mmq-q4k-blk',
      'mmq-q4k-rt',
      'mmq-q4k-tile',
      'matvec-q4k',
      'coopmat-f16',
    ]);
    expect(ids(pickCatalogs(f, { ...dense(1), experts: 8, topk: 2 }))).toEqual(['moe-q4k-id']);
    expect(ids(pickCatalogs(f, { ...dense(1), type: 'Q8_0' }))).toEqual(['mmq-q8-naive', 'mmq-q8-tiled']);
    expect(pickCatalogs(f, { ...dense(1), type: 'Q8_0', experts: 4 })).toEqual([]);
    expect(pickCatalogs(f, { ...dense(1), type: 'Q6_K' })).toEqual([]);
  });

  it("a family's base config: the GEMM's shape in its own params, synthetic data, its fastest arm here", () => {
    const moe = pickBase(CATALOG.get('moe-q4k-id'), { ...dense(16), experts: 8, topk: 2 }, SWIFTSHADER_CAPS);
    expect(moe.params).toMatchObject({ tokens: 16, n: 4096, k: 4096, experts: 8, topk: 2 });
    expect(moe.data).toEqual({ source: 'synthetic', seed: 0 });
    expect(moe.arm).toBe('dp4a');
    const coop = pickBase(CATALOG.get('coopmat-f16'), dense(512), H200);
    expect([coop.params.m, coop.arm]).toEqual([512, 'subgroup-matrix']);
    // Without caps: the portable arm.
    expect(pickBase(CATALOG.get('coopmat-f16'), dense(512)).arm).toBe('scalar');
    // A bank's own experts and top-k, not the family's defaults; a dense GEMM carries none.
    const bank = pickBase(CATALOG.get('moe-q4k-id'), { ...dense(16), experts: 4, topk: 1 });
    expect([bank.params.experts, bank.params.topk]).toEqual([4, 1]);
    expect(pickBase(CATALOG.get('coopmat-f16'), { ...dense(16), experts: 1 }).params).not.toHaveProperty(
      'experts',
    );
  });

  it('its problem key is the one `mmq tune --data synthetic` files its hunt under', () => {
    const tile = CATALOG.get('mmq-q4k-tile');
    expect(pickProblem(tile, dense(512))).toBe('m=512,n=4096,k=4096,data=synthetic#0');
    const tuneBase = {
      kernel: tile.id,
      arm: 'dp4a' as const,
      data: { source: 'synthetic' as const, seed: 0 },
      params: { ...tile.defaults, m: 512, n: 4096, k: 4096 },
    };
    expect(pickProblem(tile, dense(512))).toBe(tuneProblemKey(tile, tuneBase));
  });
});

describe('storedPickOf: the stored winner a family may serve', () => {
  const inc = [{ config: 'A', generation: 0 }];
  it('serves a winner shown faster than the incumbent, or the incumbent itself', () => {
    expect(storedPickOf({ winner: 'B', claim: { verdict: 'faster' }, entries: inc })).toBe('B');
    expect(storedPickOf({ winner: 'A', claim: { verdict: 'slower' }, entries: inc })).toBe('A');
    expect(storedPickOf({ winner: 'B', bestMs: 1, incumbentMs: 2, entries: inc })).toBe('B');
    expect(storedPickOf({ winner: 'B', bestMs: 1, entries: inc })).toBe('B');
  });
  it('not a pick the rounds did not show faster, nor one no faster than the incumbent, nor none', () => {
    expect(storedPickOf({ winner: 'B', claim: { verdict: 'no measurable difference' }, entries: inc })).toBe(
      undefined,
    );
    expect(storedPickOf({ winner: 'B', bestMs: 2, incumbentMs: 2, entries: inc })).toBeUndefined();
    expect(storedPickOf({ winner: '', entries: inc })).toBeUndefined();
    expect(storedPickOf({})).toBeUndefined();
    // The incumbent is the first entry of generation 0 only: a later entry of the same name is a pick.
    expect(
      storedPickOf({
        winner: 'B',
        claim: { verdict: 'no measurable difference' },
        entries: [{ config: 'B', generation: 1 }],
      }),
    ).toBeUndefined();
  });
  it('a hunt without entries, or whose incumbent has no figure, serves its winner', () => {
    expect(storedPickOf({ winner: 'B', bestMs: 1, incumbentMs: 2 })).toBe('B');
    expect(storedPickOf({ winner: 'B', bestMs: 3, incumbentMs: NaN, entries: inc })).toBe('B');
    expect(storedPickOf({ winner: 'B', bestMs: 3, incumbentMs: Infinity, entries: inc })).toBe('B');
  });
});

describe('settlePick', () => {
  const c = (kernel: string, ms: number | undefined, samples?: number[], verdict = 'measured') =>
    ({
      kernel,
      title: kernel,
      served: 'incumbent',
      verdict,
      ...(ms !== undefined ? { ms } : {}),
      ...(samples ? { samples } : {}),
    }) as PickCandidate;

  it('the fastest passing family wins; the margin is the next family over it', () => {
    const r = settlePick(
      dense(512),
      [c('a', 2, [2, 2.1]), c('b', 1, [1, 1.1]), c('c', 0.5, undefined, 'failed-gate'), c('d', 3, [3])],
      true,
    );
    expect([r.winner, r.runnerUp, r.margin, r.clear]).toEqual(['b', 'a', 2, true]);
    expect(r.candidates).toHaveLength(4);
  });

  it('batches that overlap make no clear margin; a lone family has none; a guess is never clear', () => {
    expect(settlePick(dense(1), [c('a', 1, [1, 1.5]), c('b', 1.2, [1.2, 1.3])], true).clear).toBe(false);
    const lone = settlePick(dense(1), [c('a', 1, [1])], true);
    expect([lone.winner, lone.runnerUp, lone.margin]).toEqual(['a', undefined, undefined]);
    expect(settlePick(dense(1), [c('a', 1, [1]), c('b', 2, [2])], false).clear).toBeUndefined();
  });

  it('says why nothing won: every family refused, or no family takes the weight', () => {
    const refused = {
      ...c('mmq-q4k-blk', undefined, undefined, 'refused'),
      reason: 'm = 1 must be a multiple of 32',
    };
    expect(settlePick(dense(1), [refused], true).note).toBe(
      'no family ran it: mmq-q4k-blk refused (m = 1 must be a multiple of 32)',
    );
    expect(settlePick({ ...dense(1), type: 'Q6_K' }, [], true).note).toBe(
      'no kernel here takes Q6_K matrices (they take Q8_0, Q4_K)',
    );
    expect(settlePick({ ...dense(1), type: 'Q8_0', experts: 4 }, [], true).note).toMatch(/Q8_0 expert banks/);
  });
});

describe('guessPick: nothing run, and it says so', () => {
  it("at the measured roofs the f16 matrix twin's higher roof wins prefill; decode is bandwidth-bound", () => {
    const peaks = {
      bandwidthGBs: 3000,
      ops: { 'f16-matrix': 500e12, 'int8-matrix': 300e12, 'int8-dot4': 60e12 },
    };
    const prefill = guessPick(CATALOG.families, dense(512), H200, peaks);
    expect(prefill.measured).toBe(false);
    expect(prefill.winner).toBe('coopmat-f16');
    expect(prefill.candidates.find((x) => x.kernel === 'matvec-q4k')!.verdict).toBe('refused');
    expect(prefill.candidates.every((x) => x.verdict === 'refused' || x.reason?.includes('roof'))).toBe(true);
    const decode = guessPick(CATALOG.families, dense(1), H200, peaks);
    // One row: every family reads the same Q4_K weight; the bytes decide, and the f16 twin's activation
    // is twice as wide.
    expect(decode.candidates.filter((x) => x.verdict === 'guessed').map((x) => x.kernel)).toEqual([
      'mmq-q4k-rt',
      'mmq-q4k-tile',
      'matvec-q4k',
      'coopmat-f16',
    ]);
    expect(decode.winner).not.toBe('coopmat-f16');
  });

  it('without peaks: the default rate per arm, said in each reason', () => {
    const g = guessPick(CATALOG.families, dense(64), SWIFTSHADER_CAPS);
    const rt = g.candidates.find((x) => x.kernel === 'mmq-q4k-rt')!;
    expect(rt.ms).toBeCloseTo((64 * 4096 * 4096) / DEFAULT_RATES.software.dp4a.macsPerMs);
    expect(rt.reason).toMatch(/default rate for the dp4a arm/);
  });
});

describe('estimatePick', () => {
  it('counts the oracle on the rows the gate samples, not every row', () => {
    const f = CATALOG.get('mmq-q4k-tile');
    const config = pickBase(f, { ...dense(512), n: 14336 }, SWIFTSHADER_CAPS);
    const rate = rateFor([], f.id, config.arm, false);
    const run = { targetMs: 25, batches: 6, software: false };
    const full = estimate(workOf(f, config), rate, { timed: true, instrument: false, passes: 1, ...run });
    const sampled = estimatePick(workOf(f, config), 512, rate, run);
    expect(sampled.ms).toBeLessThan(full.ms);
    // 18 of 512 rows: the CPU part shrinks by about 494/512.
    const cpu = (2 * 512 * 14336 * 4096) / 2e5;
    expect(full.ms - sampled.ms).toBeCloseTo((cpu * 494) / 512, 0);
    // A few rows: all are checked, nothing changes.
    const small = pickBase(f, { ...dense(4), n: 64, k: 256 }, SWIFTSHADER_CAPS);
    expect(estimatePick(workOf(f, small), 4, rate, run).ms).toBeCloseTo(
      estimate(workOf(f, small), rate, { timed: true, instrument: false, passes: 1, ...run }).ms,
    );
  });

  it('estimatePicks sums the families that accept each GEMM here', () => {
    const rateOf = (kernel: string, arm: 'scalar' | 'dp4a' | 'subgroup-matrix') =>
      rateFor([], kernel, arm, true);
    const one = estimatePicks(CATALOG.families, [dense(1)], SWIFTSHADER_CAPS, rateOf, {
      targetMs: 10,
      batches: 2,
    });
    // m = 1: blk refuses (no tails); rt, tile, matvec and coopmat run.
    expect(one.basis).toMatch(/^4 candidate configs over 1 GEMMs/);
    const none = estimatePicks(CATALOG.families, [{ ...dense(1), type: 'Q6_K' }], SWIFTSHADER_CAPS, rateOf, {
      targetMs: 10,
      batches: 2,
    });
    expect(none.ms).toBe(0);
  });
});
