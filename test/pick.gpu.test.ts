// The worker's 'pick' and 'model-run' requests on a real WebGPU device (Dawn on SwiftShader): every family
// that takes the GEMM's weight offers its pick (a stored winner where one is given and runs here, else its
// incumbent or defaults), each is gated and timed, the fastest wins with its margin over the next family;
// a family that refuses the shape says why; a weight no family takes says so; a cancel stops the run.
import { describe, expect, it } from 'vitest';
import { KERNELS } from '../src/kernels';
import type { PickResult } from '../src/kernels/tune/pick';
import type { WorkerRequest, WorkerResponse } from '../src/workers/protocol';
import { createGpuCore } from '../src/workers/core';
import { handleTuneRequest } from '../src/workers/tune';
import { getDawnGpu, getFastTestGpu, useTestGpu } from './gpu';

const gpu = useTestGpu(getFastTestGpu);
const timing = { targetMs: 2, batches: 2 };

async function call(
  req: Extract<WorkerRequest, { type: 'pick' | 'model-run' }>,
  cancelWhen?: (m: WorkerResponse) => boolean,
) {
  const msgs: WorkerResponse[] = [];
  let cancel = false;
  await handleTuneRequest(
    { device: gpu().device, caps: gpu().caps, kernels: KERNELS, isCancelled: () => cancel },
    req,
    (m) => {
      msgs.push(m);
      if (cancelWhen?.(m)) cancel = true;
    },
  );
  return msgs;
}

const byKernel = (r: PickResult) => Object.fromEntries(r.candidates.map((c) => [c.kernel, c]));

describe("'pick' on SwiftShader", () => {
  it('gates and times every Q4_K family at 4 rows; the fastest wins over the next by their ratio', async () => {
    const gemm = { type: 'Q4_K', n: 64, k: 256, rows: 4 };
    // The tile family's stored winner: 16x16 micro-tiles on dp4a (the only fast arm here).
    const stored = { 'mmq-q4k-tile': 'WM=1,WN=1,RM=1,RN=1,SCHED=1,ARM=0', 'coopmat-f16': 'not a config' };
    const msgs = await call({ type: 'pick', id: 1, gemm, stored, timing });
    const done = msgs.at(-1)!;
    if (done.type !== 'pick-result') throw new Error(JSON.stringify(done));
    const r = done.result;
    const c = byKernel(r);
    expect(r.candidates.map((x) => x.kernel)).toEqual([
      'mmq-q4k-blk',
      'mmq-q4k-rt',
      'mmq-q4k-tile',
      'matvec-q4k',
      'coopmat-f16',
    ]);
    // No tail guards: 4 rows are no whole 32-row tile.
    expect(c['mmq-q4k-blk']).toMatchObject({ verdict: 'refused', served: 'defaults' });
    expect(c['mmq-q4k-blk']!.reason).toMatch(/m = 4 is not a multiple of 32/);
    for (const k of ['mmq-q4k-rt', 'mmq-q4k-tile', 'matvec-q4k', 'coopmat-f16']) {
      const x = c[k]!;
      expect(x.verdict, `${k}: ${x.reason ?? ''}`).toBe('measured');
      expect(x.ms).toBeGreaterThan(0);
      expect(x.samples!.length).toBeGreaterThanOrEqual(2);
      expect(x.ms).toBe(Math.min(...x.samples!));
      expect(x.ops).toBe(2 * 4 * 64 * 256);
      expect(x.bytes).toBeGreaterThan((64 * 256 * 144) / 256);
      expect(x.config!.data).toEqual({ source: 'synthetic', seed: 0 });
    }
    expect([c['mmq-q4k-rt']!.gate, c['coopmat-f16']!.gate]).toEqual(['bit-exact', 'rel_to_max < 1e-5']);
    expect(c['mmq-q4k-rt']!.served).toBe('defaults');
    expect(c['matvec-q4k']!.served).toBe('incumbent');
    // The stored winner served, its config applied; a stored name that is no config falls back, saying why.
    expect(c['mmq-q4k-tile']!.served).toBe('WM=1,WN=1,RM=1,RN=1,SCHED=1,ARM=0');
    expect(c['mmq-q4k-tile']!.config).toMatchObject({
      arm: 'dp4a',
      params: { wm: 1, wn: 1, schedule: 'microtile' },
    });
    expect(c['coopmat-f16']).toMatchObject({
      served: 'incumbent',
      fallback: 'cached winner "not a config" is not a config of this space',
    });
    // The winner is the fastest; the margin is the next family's time over it.
    const ranked = r.candidates.filter((x) => x.verdict === 'measured').sort((a, b) => a.ms! - b.ms!);
    expect(r.winner).toBe(ranked[0]!.kernel);
    expect(r.runnerUp).toBe(ranked[1]!.kernel);
    expect(r.margin).toBeCloseTo(ranked[1]!.ms! / ranked[0]!.ms!, 10);
    expect(r.measured).toBe(true);
    // Progress on the way, never stepping back, each saying what it waits on.
    const progress = msgs.filter((m) => m.type === 'progress');
    expect(progress.length).toBeGreaterThanOrEqual(8);
    const fractions = progress.map((m) => (m.type === 'progress' ? m.fraction : 0));
    expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
    expect(progress.every((m) => m.type === 'progress' && (m.busy === 'cpu' || m.busy === 'gpu'))).toBe(true);
  }, 240_000);

  it("'model-run': each GEMM in turn, an expert bank on the MoE family, a weight none takes noted", async () => {
    const gemms = [
      {
        gemm: { type: 'Q4_K', n: 32, k: 256, experts: 4, topk: 2, rows: 4 },
        stored: { 'moe-q4k-id': 'ROUTE=9' },
      },
      { gemm: { type: 'Q8_0', n: 64, k: 64, rows: 32 } },
      { gemm: { type: 'Q6_K', n: 64, k: 256, rows: 32 } },
    ];
    const msgs = await call({ type: 'model-run', id: 2, gemms, timing });
    const steps = msgs.filter((m) => m.type === 'model-progress');
    expect(steps.map((m) => (m.type === 'model-progress' ? m.index : -1))).toEqual([0, 1, 2]);
    const done = msgs.at(-1)!;
    if (done.type !== 'model-run-done') throw new Error(JSON.stringify(done));
    const [bank, q8, q6] = done.results;
    expect(bank!.candidates.map((x) => [x.kernel, x.verdict])).toEqual([['moe-q4k-id', 'measured']]);
    expect(bank!.candidates[0]!.config!.params).toMatchObject({ tokens: 4, experts: 4, topk: 2, n: 32 });
    expect(bank!.candidates[0]!.fallback).toMatch(/ROUTE=9/);
    expect([bank!.winner, bank!.runnerUp, bank!.margin]).toEqual(['moe-q4k-id', undefined, undefined]);
    expect(q8!.candidates.map((x) => [x.kernel, x.verdict])).toEqual([
      ['mmq-q8-naive', 'measured'],
      ['mmq-q8-tiled', 'measured'],
    ]);
    expect(q8!.margin).toBeGreaterThanOrEqual(1);
    expect(q6).toMatchObject({
      candidates: [],
      note: 'no kernel here takes Q6_K matrices (they take Q8_0, Q4_K)',
    });
    expect(q6!.winner).toBeUndefined();
  }, 240_000);

  it('a cancel stops a model run between candidates: the handler answers cancelled, nothing more', async () => {
    const gemms = [
      { gemm: { type: 'Q4_K', n: 64, k: 256, rows: 4 } },
      { gemm: { type: 'Q8_0', n: 64, k: 64, rows: 32 } },
    ];
    const msgs = await call({ type: 'model-run', id: 3, gemms, timing }, (m) => m.type === 'progress');
    expect(msgs.at(-1)).toEqual({ type: 'cancelled', id: 3 });
    expect(msgs.some((m) => m.type === 'model-progress' || m.type === 'model-run-done')).toBe(false);
  }, 60_000);

  it('the worker core serves a pick through its tune handler, and says so where it has none', async () => {
    const through = async (withHandler: boolean) => {
      const msgs: WorkerResponse[] = [];
      const core = createGpuCore({
        gpu: getDawnGpu(),
        kernels: KERNELS,
        post: (m) => msgs.push(m),
        ...(withHandler
          ? {
              tune: (req, ctx) =>
                handleTuneRequest({ ...ctx, isCancelled: () => ctx.isCancelled() }, req, ctx.post),
            }
          : {}),
      });
      await core.handle({ type: 'pick', id: 7, gemm: { type: 'Q8_0', n: 32, k: 64, rows: 16 }, timing });
      core.current()?.device.destroy();
      return msgs.filter((m) => 'id' in m && m.id === 7 && m.type !== 'progress' && m.type !== 'ready');
    };
    const [served] = await through(true);
    expect(served).toMatchObject({ type: 'pick-result', result: { winner: 'mmq-q8-naive', measured: true } });
    expect(await through(false)).toEqual([
      { type: 'error', id: 7, kind: 'unsupported', message: 'this worker has no tuner' },
    ]);
  }, 120_000);
});
