// The tuner on a real WebGPU device (Dawn on SwiftShader): the seed's hunts at its small shape
// (m=16, n=16, k=256, population 8, generations 3, measureIters 1), the cache hit on the second hunt,
// and the evaluator's gate failing a wrong kernel. (The f16 twin's hunt: tune.coopmat.test.ts; the
// worker handler: tune.handler.test.ts.)
import { describe, expect, it } from 'vitest';
import { useTestGpu } from './gpu';
import { deviceId, isSoftwareAdapter } from '../src/kernels/gpu/caps';
import { CLOCK_WARM_MS, clockWarmMs, readBuffer, runPlan, timePasses } from '../src/kernels/gpu/run';
import {
  Evolution,
  MemoryTuneCache,
  tileConfig,
  tileLimits,
  tileOf,
  tileStaticCheck,
  Tuner,
  type Config,
  type Evaluator,
} from '../src/kernels/tune';
import type { KernelPlan, PassSpec } from '../src/kernels/gpu/plan';
import { gateRows, MmqQ4kEval, onePass, TileEvaluator } from '../src/workers/tune';
import { HUNT } from './tuneHunt';

const gpu = useTestGpu();
const { space, incumbent, shape } = HUNT;

/** Counts what the GA asks of an evaluator. */
function counting(ev: Evaluator) {
  const calls = { staticCheck: 0, measure: 0 };
  const wrapped: Evaluator = {
    staticCheck: (c: Config) => (calls.staticCheck++, ev.staticCheck(c)),
    measure: (c: Config, iters: number) => (calls.measure++, ev.measure(c, iters)),
  };
  return { wrapped, calls };
}

const evo = new Evolution({ population: 8, generations: 3, measureIters: 1 });

/** A one-workgroup stand-in pass. */
const standIn = (label: string, wgsl: string, bindings: string[]): PassSpec => ({
  label,
  wgsl,
  entryPoint: 'main',
  bindings,
  workgroups: [1, 1, 1],
  workgroupSize: 64,
});

describe('tile hunts on SwiftShader', () => {
  it('int8 MMQ hunt: feasible bit-close winner, every measured tile gated, second hunt hits the cache', async () => {
    const { device, caps } = gpu();
    const t0 = performance.now();
    const ev = MmqQ4kEval.create(device, caps, HUNT.evalOptions);
    try {
      const { wrapped, calls } = counting(ev);
      const tuner = new Tuner(new MemoryTuneCache());
      const id = deviceId(caps);
      const r = await tuner.evolve(id, 'mmq_q4k_tile', shape, space, wrapped, evo, 0xc0ffee, {
        seeds: [incumbent],
      });
      const ms = performance.now() - t0;
      expect(r.fromCache).toBe(false);
      const rep = r.report!;
      expect(rep.bestMs).toBeLessThan(Infinity);
      const win = space.parse(r.winner!);
      expect(win).toBeDefined();
      expect(space.feasible(win!)).toBe(true);
      expect(ev.staticCheck(win!).kind).toBe('pass');
      expect(rep.failedGate).toEqual([]);
      expect(ev.worstRel).toBeLessThan(1e-3);
      expect(rep.measured.length).toBeGreaterThan(0);
      expect(rep.measured.every((e) => e.worstRel! < 1e-3 && e.ms > 0)).toBe(true);
      // The static tier on this adapter: rejects follow from its limits, with reasons.
      for (const e of rep.rejected) expect(e.reason).toMatch(/workgroup|register tile/);
      console.log(
        `[mmq hunt SwiftShader] ${ev.arm} plane ${ev.plane} winner=${r.winner} ${rep.bestMs.toFixed(4)} ms evaluated=${rep.evaluated} measured=${rep.measured.length} rejected=${rep.rejected.length} worst_rel=${ev.worstRel.toExponential(2)} timing=${ev.timing} in ${(ms / 1000).toFixed(1)} s`,
      );

      const before = { ...calls };
      const r2 = await tuner.evolve(id, 'mmq_q4k_tile', shape, space, wrapped, evo, 0xc0ffee, {
        seeds: [incumbent],
      });
      expect(r2.fromCache).toBe(true);
      expect(r2.report).toBeUndefined();
      expect(r2.winner).toBe(r.winner);
      expect(calls).toEqual(before);
    } finally {
      ev.destroy();
    }
  });

  it('the gate fails a kernel that skips outputs or computes the wrong thing, and rejects what the adapter cannot run', async () => {
    const { device, caps } = gpu();
    const len = 64;
    const oracle = new Float32Array(len).fill(3);
    // A stand-in kernel: out[i] = w[i % 4] for i < limit (the bank is rotated, bank 0 holds 3s).
    const kernel = (limit: number) => `
@group(0) @binding(0) var<storage, read> w: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  if (g.x < ${limit}u) { out[g.x] = w[g.x % 4u]; }
}`;
    const make = (limit: number, bank0: number) =>
      new TileEvaluator({
        device,
        space,
        label: 'gate-test',
        gate: { kind: 'rel-to-max', tol: 1e-3 },
        resident: {},
        bankBinding: 'w',
        banks: [new Float32Array(4).fill(bank0), new Float32Array(4).fill(7)],
        outputBinding: 'out',
        rows: 1,
        cols: len,
        oracle,
        repeats: 2,
        kernelFor: () => onePass(standIn(`gate-test ${limit}`, kernel(limit), ['w', 'out'])),
        staticCheck: (c) => tileStaticCheck(tileOf(space, c), tileLimits(caps, 4), () => 0),
      });
    const good = make(len, 3);
    const partial = make(len / 2, 3);
    const wrong = make(len, 3.1);
    try {
      const m = await good.measure(incumbent, 4);
      expect(m.worstRel).toBe(0);
      expect(m.ms).toBeGreaterThan(0);
      expect(m.ms).toBeLessThan(Infinity);
      const p = await partial.measure(incumbent, 4);
      expect(p.ms).toBe(Infinity); // unwritten elements stay NaN
      expect(p.reason).toMatch(/rel_to_max/);
      const w = await wrong.measure(incumbent, 4);
      expect(w.ms).toBe(Infinity);
      expect(w.worstRel).toBeCloseTo(0.1 / 3, 5);
      // With a sampled oracle (row 0 of 4), rows it skips must still be written.
      const sampledGate = new TileEvaluator({
        device,
        space,
        label: 'gate-test sampled',
        gate: { kind: 'rel-to-max', tol: 1e-3 },
        resident: {},
        bankBinding: 'w',
        banks: [new Float32Array(4).fill(3)],
        outputBinding: 'out',
        rows: 4,
        cols: 16,
        oracle: new Float32Array(16).fill(3),
        oracleRows: [0],
        repeats: 1,
        kernelFor: () => onePass(standIn('gate-test 16', kernel(16), ['w', 'out'])),
        staticCheck: () => ({ kind: 'pass' }),
      });
      try {
        const sv = await sampledGate.check(incumbent);
        expect(sv.pass).toBe(false);
        expect(sv.relToMax).toBe(Infinity);
        expect(sv.mismatches).toBe(48);
      } finally {
        sampledGate.destroy();
      }
      // The static tier uses the real adapter's limits.
      const v = good.staticCheck(tileConfig(space, { wm: 4, wn: 4, rm: 4, rn: 8 }));
      expect(v).toEqual({
        kind: 'reject',
        reason: 'register tile 32 fragments/warp (RM 4 x RN 8) > 16 budget',
      });
    } finally {
      good.destroy();
      partial.destroy();
      wrong.destroy();
    }
  });

  it('timePasses warms the clocks with untimed runs for warmMs, runPlan passes it on, and a CPU adapter gets none', async () => {
    const { device, caps } = gpu();
    // Each run adds 1 to a counter, so the warm-up's dispatches are counted, not assumed.
    const code = `@group(0) @binding(0) var<storage, read_write> c: atomic<u32>;
@compute @workgroup_size(1) fn main() { atomicAdd(&c, 1u); }`;
    const module = device.createShaderModule({ code });
    const pipeline = device.createComputePipeline({
      layout: 'auto',
      compute: { module, entryPoint: 'main' },
    });
    const counter = device.createBuffer({ size: 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
    const group = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [{ binding: 0, resource: { buffer: counter } }],
    });
    const steps = [{ pipeline, groups: [group], workgroups: [1, 1, 1] as const }];
    const runs = async () => new Uint32Array(await readBuffer(device, counter, 4))[0]!;
    try {
      await timePasses(device, steps, 4);
      // The first untimed batch (2 runs), then the 4 timed (4 more when a zero timestamp span sends it
      // to the wall clock, as SwiftShader's can for a batch this short).
      const cold = await runs();
      expect([2 + 4, 2 + 4 + 4]).toContain(cold);
      const t0 = performance.now();
      const t = await timePasses(device, steps, 4, undefined, 250);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(250);
      expect(t.ms).toBeGreaterThan(0);
      expect((await runs()) - cold).toBeGreaterThan(2 + 8 + 10); // warm-up runs beyond the first batch
      // After an idle gap (the gate's CPU oracle, say) the warm-up is at least 4x as long.
      await new Promise((r) => setTimeout(r, 700));
      const t1 = performance.now();
      await timePasses(device, steps, 4, undefined, 100);
      expect(performance.now() - t1).toBeGreaterThanOrEqual(400);
      // runPlan (the playground's Run) passes its warm-up to every timing it takes.
      const plan: KernelPlan = {
        buffers: [{ name: 'c', kind: 'storage', size: 4 }],
        passes: [{ ...standIn('count', code, ['c']), workgroups: [1, 1, 1] }],
        output: 'c',
        outputType: 'u32',
        mainPass: 0,
      };
      const cold2 = await runPlan(device, plan, { iters: 4 }); // compiles; no warm-up asked
      expect(cold2.msPerDispatch).toBeGreaterThan(0);
      const t3 = performance.now();
      const warmRun = await runPlan(device, plan, { iters: 4, warmMs: 300 });
      expect(performance.now() - t3).toBeGreaterThanOrEqual(300);
      expect(warmRun.msPerDispatch).toBeGreaterThan(0);
      // The tuner warms on hardware only: SwiftShader has no clocks to ramp up.
      expect(isSoftwareAdapter(caps)).toBe(true);
      expect(clockWarmMs(caps)).toBe(0);
      const gpuLike = { ...caps, vendor: 'nvidia', architecture: 'hopper', description: 'NVIDIA H200' };
      expect(clockWarmMs(gpuLike)).toBe(CLOCK_WARM_MS);
    } finally {
      counter.destroy();
    }
  });

  it('a multi-pass config runs every pass, through its scratch buffer, in the gate and the timing', async () => {
    const { device } = gpu();
    const len = 64;
    // Pass 0 doubles the (rotated) bank into scratch `mid`; pass 1 halves it into out. The oracle holds
    // bank 0's 3s, so the gate passes only if both passes ran in order on the same bank.
    const pre = standIn(
      'double',
      `@group(0) @binding(0) var<storage, read> w: array<f32>;
@group(0) @binding(1) var<storage, read_write> mid: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { mid[g.x] = 2.0 * w[g.x % 4u]; }`,
      ['w', 'mid'],
    );
    const post = (scale: string) =>
      standIn(
        'halve',
        `@group(0) @binding(0) var<storage, read> mid: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { out[g.x] = ${scale} * mid[g.x]; }`,
        ['mid', 'out'],
      );
    const make = (passes: PassSpec[], scratch = [{ name: 'mid', bytes: len * 4 }]) =>
      new TileEvaluator({
        device,
        space,
        label: 'two-pass',
        gate: { kind: 'rel-to-max', tol: 1e-3 },
        resident: {},
        bankBinding: 'w',
        banks: [new Float32Array(4).fill(3), new Float32Array(4).fill(5)],
        outputBinding: 'out',
        rows: 1,
        cols: len,
        oracle: new Float32Array(len).fill(3),
        repeats: 1,
        kernelFor: () => ({ label: 'two-pass', passes, scratch }),
        staticCheck: () => ({ kind: 'pass' }),
      });
    const chained = make([pre, post('0.5')]);
    const postOnly = make([post('0.5')]); // scratch never written: zeros, not 3s
    const noScratch = make([pre, post('0.5')], []);
    try {
      const m = await chained.measure(incumbent, 4);
      expect(m.worstRel).toBe(0);
      expect(m.ms).toBeGreaterThan(0);
      expect(m.ms).toBeLessThan(Infinity);
      expect((await postOnly.measure(incumbent, 4)).ms).toBe(Infinity);
      await expect(noScratch.check(incumbent)).rejects.toThrow(
        /binds "mid" but the evaluator has no such buffer/,
      );
    } finally {
      chained.destroy();
      postOnly.destroy();
      noScratch.destroy();
    }
  });

  it('large shapes gate on a row sample that covers every subtile row position and the tail', async () => {
    expect(gateRows(16, 16, 256)).toBeUndefined();
    const rows = gateRows(1000, 4096, 4096)!;
    expect(rows.length).toBeGreaterThanOrEqual(16);
    expect(rows[0]).toBe(0);
    expect(rows.at(-1)).toBe(999);
    expect(new Set(rows.map((r) => r % 16)).size).toBe(16);
    expect(rows.length).toBe(18); // 2^28 / (4096 * 4096) = 16, raised to the 18 that cover every position
    // A real tile gated on 8 sampled rows of 64 passes; the sampled oracle matches the full one's rows.
    const { device, caps } = gpu();
    const ev = MmqQ4kEval.create(device, caps, {
      m: 64,
      n: 16,
      k: 256,
      banks: 1,
      repeats: 1,
      oracleMacBudget: 8 * 16 * 256,
    });
    try {
      const v = await ev.check(incumbent);
      expect(v.pass).toBe(true);
      expect(v.relToMax).toBeLessThan(1e-3);
    } finally {
      ev.destroy();
    }
  });
});
