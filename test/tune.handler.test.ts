// The worker's 'tune' / 'autokernel' handler on a real WebGPU device (Dawn on SwiftShader): progress
// per config, the full report, the cache replay of a stored run, the autokernel's choice, errors, cancel.
import { describe, expect, it } from 'vitest';
import { useTestGpu } from './gpu';
import { deviceId } from '../src/kernels/gpu/caps';
import { COOPMAT_PRIOR_CHOICES, huntSeeds, mmqQ4kIncumbent, tileSpaceFor } from '../src/kernels/tune';
import type { TuneHandler } from '../src/workers/core';
import { handleTuneRequest, tuneHandler } from '../src/workers/tune';
import type { EvolutionParams, TuneReport, WorkerResponse } from '../src/workers/protocol';

// The worker core mounts the handler through its TuneHandler slot: this must type-check.
const mounted: TuneHandler = tuneHandler;

const gpu = useTestGpu();

describe('worker handler on SwiftShader', () => {
  const evoParams: EvolutionParams = {
    population: 3,
    generations: 2,
    seed: 7,
    measureIters: 1,
    repeats: 1,
    banks: 2,
  };

  async function call(req: Parameters<typeof handleTuneRequest>[1], cancelAfter = Infinity) {
    const msgs: WorkerResponse[] = [];
    let progress = 0;
    await handleTuneRequest(
      { device: gpu().device, caps: gpu().caps, isCancelled: () => progress >= cancelAfter },
      req,
      (m) => {
        msgs.push(m);
        if (m.type === 'tune-progress') progress++;
      },
    );
    return msgs;
  }

  it("'tune' posts progress per config and the full report; passing it back replays it from the cache", async () => {
    const msgs = await call({
      type: 'tune',
      id: 1,
      op: 'mmq_q4k_tile',
      m: 16,
      n: 16,
      k: 256,
      evo: evoParams,
    });
    const done = msgs.at(-1);
    expect(done?.type).toBe('tune-done');
    if (done?.type !== 'tune-done') return;
    const report: TuneReport = done.report;
    expect(done.fromCache).toBe(false);
    const progress = msgs.filter((m) => m.type === 'tune-progress');
    expect(progress).toHaveLength(report.entries.length);
    expect(report.entries.length).toBe(3 + 1); // generation 0, then population - elitism children
    expect(report.entries[0]!.config).toBe('WM=2,WN=4,RM=1,RN=1'); // the incumbent is seeded first
    expect(report.incumbentMs).toBeGreaterThan(0);
    expect(report.bestMs).toBeLessThanOrEqual(report.incumbentMs!);
    // The finalists: the fastest three and the incumbent, re-timed; the winner and the incumbent's ms are
    // their re-timings, so the speedup compares like with like.
    const finals = report.finals!;
    expect(finals.length).toBeGreaterThanOrEqual(2);
    expect(finals.map((f) => f.config)).toContain('WM=2,WN=4,RM=1,RN=1');
    expect(report.incumbentMs).toBe(finals.find((f) => f.config === 'WM=2,WN=4,RM=1,RN=1')!.ms);
    expect(report.bestMs).toBe(Math.min(...finals.map((f) => f.ms)));
    expect(finals.find((f) => f.config === report.winner)!.ms).toBe(report.bestMs);
    expect(report.winner).not.toBe('');
    expect(report.deviceId).toBe(deviceId(gpu().caps));
    expect(report.worstRel).toBeLessThan(1e-3);
    expect(report.bestPerGeneration).toHaveLength(2);
    expect(
      report.entries.every((e) => e.bm === e.tile.wm * e.tile.rm * 16 && e.bn === e.tile.wn * e.tile.rn * 16),
    ).toBe(true);

    const again = await call({
      type: 'tune',
      id: 2,
      op: 'mmq_q4k_tile',
      m: 16,
      n: 16,
      k: 256,
      evo: evoParams,
      cached: report,
    });
    expect(again).toEqual([{ type: 'tune-done', id: 2, report, fromCache: true }]);
    // A cached run of another shape is not a hit.
    const other = await call({
      type: 'tune',
      id: 3,
      op: 'mmq_q4k_tile',
      m: 16,
      n: 32,
      k: 256,
      evo: { ...evoParams, generations: 1, population: 2 },
      cached: report,
    });
    expect(other.at(-1)).toMatchObject({ type: 'tune-done', fromCache: false });
  });

  it("a coopmat 'tune' starts from the incumbent at every staging, then the priors, each run as a whole plan", async () => {
    const population = 4 + COOPMAT_PRIOR_CHOICES.length;
    const msgs = await call({
      type: 'tune',
      id: 2,
      op: 'mmq_q4k_coopmat',
      m: 32,
      n: 64,
      k: 256,
      evo: { ...evoParams, population, generations: 1 },
    });
    const done = msgs.at(-1);
    expect(done?.type).toBe('tune-done');
    if (done?.type !== 'tune-done') return;
    const space = tileSpaceFor('mmq_q4k_coopmat');
    const seeds = huntSeeds(space, mmqQ4kIncumbent(), 'one-pass').map((c) => space.name(c));
    expect(done.report.entries.map((e) => e.config)).toEqual(seeds);
    // Every prior runs here (the scalar arm's split plans, block tails included) and passes the gate.
    const priors = done.report.entries.slice(4);
    expect(priors.map((e) => ({ tile: e.tile, staging: e.staging }))).toEqual([...COOPMAT_PRIOR_CHOICES]);
    for (const e of priors) expect(e.verdict, `${e.config}: ${e.reason ?? ''}`).toBe('measured');
    expect(done.report.worstRel).toBeLessThan(5e-2);
    // Every measured seed is re-timed among the finalists, so one spoiled search timing cannot drop it.
    const measuredSeeds = done.report.entries.filter((e) => e.verdict === 'measured').map((e) => e.config);
    expect(new Set(done.report.finals!.map((f) => f.config))).toEqual(new Set(measuredSeeds));
    // Each re-timing is clocked (the dashboard and bench/apptune.ts show what the finalists cost).
    for (const f of done.report.finals!) expect(f.wallMs).toBeGreaterThanOrEqual(0);
  });

  it("'autokernel' serves the cached winner, or the incumbent (and says why)", async () => {
    const base = { type: 'autokernel' as const, op: 'mmq_q4k_tile' as const, m: 16, n: 16, k: 256 };
    const cold = await call({ ...base, id: 10 });
    expect(cold).toHaveLength(1);
    expect(cold[0]).toMatchObject({
      type: 'autokernel-result',
      served: 'incumbent',
      tile: mmqQ4kIncumbent(),
      verdict: { pass: true },
    });
    const warm = await call({ ...base, id: 11, cachedWinner: 'WM=1,WN=1,RM=1,RN=1' });
    expect(warm[0]).toMatchObject({
      type: 'autokernel-result',
      served: 'WM=1,WN=1,RM=1,RN=1',
      tile: { wm: 1, wn: 1, rm: 1, rn: 1 },
      verdict: { pass: true },
    });
    const bad = await call({ ...base, id: 12, cachedWinner: 'WM=7,WN=1,RM=1,RN=1' });
    expect(bad[0]).toMatchObject({
      type: 'autokernel-result',
      served: 'incumbent',
      fallback: expect.stringMatching(/not a config/),
    });
    // The coopmat twin's configs name a staging too: the split plans run (pre-passes, then the GEMM)
    // on this adapter's scalar arm, and the served staging comes back with the tile.
    const coop = await call({
      ...base,
      op: 'mmq_q4k_coopmat',
      id: 13,
      cachedWinner: 'WM=1,WN=1,RM=1,RN=1,STAGING=2',
    });
    expect(coop[0]).toMatchObject({
      type: 'autokernel-result',
      served: 'WM=1,WN=1,RM=1,RN=1,STAGING=2',
      tile: { wm: 1, wn: 1, rm: 1, rn: 1 },
      staging: 'fused-prepass',
      verdict: { pass: true },
    });
    // WM = 8 is in the coopmat twin's space only: served there, a fallback for the int8 op.
    const wide = await call({
      ...base,
      op: 'mmq_q4k_coopmat',
      id: 14,
      cachedWinner: 'WM=8,WN=1,RM=1,RN=1,STAGING=3',
    });
    expect(wide[0]).toMatchObject({
      type: 'autokernel-result',
      served: 'WM=8,WN=1,RM=1,RN=1,STAGING=3',
      tile: { wm: 8, wn: 1, rm: 1, rn: 1 },
      staging: 'in-gemm',
      verdict: { pass: true },
    });
    // A winner cached before the staging was searched: the incumbent with the arm's default staging.
    const old = await call({ ...base, op: 'mmq_q4k_coopmat', id: 16, cachedWinner: 'WM=8,WN=1,RM=1,RN=1' });
    expect(old[0]).toMatchObject({
      served: 'incumbent',
      tile: mmqQ4kIncumbent(),
      staging: 'one-pass',
      fallback: expect.stringMatching(/not a config/),
    });
    const int8Wide = await call({ ...base, id: 15, cachedWinner: 'WM=8,WN=1,RM=1,RN=1' });
    expect(int8Wide[0]).toMatchObject({
      served: 'incumbent',
      fallback: expect.stringMatching(/not a config/),
    });
  });

  it('the core-shaped tuneHandler posts through ctx.post', async () => {
    const msgs: WorkerResponse[] = [];
    const ctx = {
      device: gpu().device,
      caps: gpu().caps,
      deviceId: 'core-id',
      post: (m: WorkerResponse) => msgs.push(m),
      isCancelled: () => false,
    };
    await mounted({ type: 'autokernel', id: 30, op: 'mmq_q4k_tile', m: 16, n: 16, k: 256 }, ctx);
    expect(msgs).toHaveLength(1);
    expect(msgs[0]).toMatchObject({ type: 'autokernel-result', id: 30, served: 'incumbent' });
  });

  it('bad input is an error message, a cancel is a cancelled reply', async () => {
    const shapeErr = await call({
      type: 'tune',
      id: 20,
      op: 'mmq_q4k_tile',
      m: 16,
      n: 16,
      k: 300,
      evo: evoParams,
    });
    expect(shapeErr).toEqual([
      {
        type: 'error',
        id: 20,
        kind: 'shape',
        message: expect.stringMatching(/k = 300 is not a multiple of 256/),
      },
    ]);
    const evoErr = await call({
      type: 'tune',
      id: 21,
      op: 'mmq_q4k_tile',
      m: 16,
      n: 16,
      k: 256,
      evo: { ...evoParams, population: 0 },
    });
    expect(evoErr[0]).toMatchObject({
      type: 'error',
      kind: 'shape',
      message: expect.stringMatching(/population/),
    });
    const cancelled = await call(
      { type: 'tune', id: 22, op: 'mmq_q4k_tile', m: 16, n: 16, k: 256, evo: evoParams },
      2,
    );
    expect(cancelled.filter((m) => m.type === 'tune-progress')).toHaveLength(2);
    expect(cancelled.at(-1)).toEqual({ type: 'cancelled', id: 22 });
  });
});
