// The one runner on Dawn/SwiftShader: prepare once, run, read back, time and destroy; the timing method
// every consumer shares (batch calibrated to a target, the fastest of several batches, the timer's step),
// cancellation between batches, cold weight banks, resident buffers shared by several plans, and the
// errors a plan can raise.
import { describe, expect, it } from 'vitest';
import { CancelledError } from '../src/kernels/cancel';
import { bindingDecls, bindingNames, readWrite } from '../src/kernels/gpu/bindings';
import { GRID_SLICE_PARAM, gridSliceLets, withGridSlice } from '../src/kernels/gpu/gridSlice';
import type { KernelPlan } from '../src/kernels/gpu/plan';
import {
  GpuValidationError,
  preparePlan,
  readBuffer,
  runPlan,
  uploadResident,
  WgslCompileError,
} from '../src/kernels/gpu/runner';
import { batchesAgree } from '../src/kernels/gpu/timing';
import { useTestGpu } from './gpu';

const gpu = useTestGpu();

/**
 * out[i] = a[i] * factor + the bank marker w[0], over n elements, 64 a workgroup; with `count`, each run
 * also adds 1 to w[1] of the weight bank it bound.
 */
function scalePlan(
  n: number,
  factor: number,
  opts: { skipLast?: boolean; weight?: number; count?: boolean } = {},
): KernelPlan {
  const wgsl = `@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, ${opts.count ? 'read_write' : 'read'}> w: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3u) {
  let i = g.x;
  if (i >= ${opts.skipLast ? n - 1 : n}u) { return; }
  out[i] = a[i] * ${factor.toFixed(1)} + w[0];${opts.count ? '\n  if (i == 0u) { w[1] += 1.0; }' : ''}
}
`;
  return {
    buffers: [
      { name: 'a', kind: 'read-only-storage', data: Float32Array.from({ length: n }, (_, i) => i) },
      {
        name: 'w',
        kind: opts.count ? 'storage' : 'read-only-storage',
        size: 8,
        data: () => new Float32Array([opts.weight ?? 0, 0]),
        role: 'weight',
      },
      { name: 'out', kind: 'storage', size: n * 4 },
    ],
    passes: [
      {
        label: 'scale',
        wgsl,
        entryPoint: 'main',
        workgroups: [Math.ceil(n / 64), 1, 1],
        bindings: ['a', 'w', 'out'],
        workgroupSize: 64,
        workgroupBytes: 0,
      },
    ],
    output: 'out',
    outputType: 'f32',
    mainPass: 0,
  };
}

describe('the runner', () => {
  it('prepares once, runs and reads back; an element nothing wrote is NaN; destroy frees it for good', async () => {
    const { device } = gpu();
    const p = await preparePlan(device, scalePlan(100, 2, { skipLast: true }));
    await p.run();
    const out = new Float32Array(await p.read('out'));
    expect([out[0], out[1], out[98]]).toEqual([0, 2, 196]);
    expect(Number.isNaN(out[99])).toBe(true);
    await p.run(); // runs again on the same buffers
    expect(new Float32Array(await p.read('out'))[5]).toBe(10);
    p.destroy();
    await expect(p.run()).rejects.toThrow(/after destroy/);
  });

  it('times by the one method: a batch calibrated to the target, several batches, the fastest, the timer step', async () => {
    const { device } = gpu();
    const p = await preparePlan(device, scalePlan(4096, 3));
    try {
      const t = await p.time({ targetMs: 5, batches: 3 });
      expect(t.samples.length).toBeGreaterThanOrEqual(3);
      expect(t.samples.length).toBeLessThanOrEqual(6);
      expect(t.ms).toBe(Math.min(...t.samples));
      expect(t.ms).toBeGreaterThan(0);
      expect(t.runs).toBeGreaterThanOrEqual(1);
      // A run is well under the 5 ms target here: the batch holds several runs.
      expect(t.runs * t.ms).toBeLessThan(50);
      expect(['timestamp', 'wall']).toContain(t.method);
      expect(t.resolutionNs).toBeGreaterThanOrEqual(1);
      expect(t.coarse).toBe(t.ms * t.runs * 1e6 < 10 * t.resolutionNs);
      // A larger target, longer batches.
      const long = await p.time({ targetMs: 40, batches: 1, estimateMs: t.ms });
      expect(long.runs).toBeGreaterThan(t.runs);
      // Batches that disagree by more than 10% get as many again.
      expect(batchesAgree([1, 1.05])).toBe(true);
      expect(batchesAgree([1, 1.2])).toBe(false);
    } finally {
      p.destroy();
    }
  });

  it('checks cancellation between batches and reports each batch', async () => {
    const { device } = gpu();
    const p = await preparePlan(device, scalePlan(1024, 1));
    try {
      const seen: number[] = [];
      let stop = false;
      const timing = p.time({
        targetMs: 1,
        batches: 20,
        cancelled: () => stop,
        onBatch: (done) => {
          seen.push(done);
          if (done === 2) stop = true;
        },
      });
      await expect(timing).rejects.toBeInstanceOf(CancelledError);
      expect(seen).toEqual([1, 2]);
    } finally {
      p.destroy();
    }
  });

  it('rotates cold weight banks: copies of the weight, distinct allocations, one per timed run', async () => {
    const { device } = gpu();
    const plan = scalePlan(64, 1, { weight: 7 });
    const res = uploadResident(
      device,
      plan.buffers.filter((b) => b.data),
      { banks: 3 },
    );
    try {
      expect(res.banks).toBe(3);
      expect(res.bankBytes).toBe(8);
      const banks = [0, 1, 2].map((b) => res.buffer('w', b)!);
      expect(new Set(banks).size).toBe(3);
      expect(res.buffer('a', 0)).toBe(res.buffer('a', 2)); // not a weight: one buffer
      for (const b of banks) expect(new Float32Array(await readBuffer(device, b))[0]).toBe(7);
      // Two plans share the resident inputs and own their outputs.
      const p1 = await preparePlan(device, plan, { resident: res });
      const p2 = await preparePlan(device, scalePlan(64, 5, { weight: 7 }), { resident: res });
      await p1.run();
      await p2.run();
      expect(new Float32Array(await p1.read('out'))[3]).toBe(3 + 7);
      expect(new Float32Array(await p2.read('out'))[3]).toBe(15 + 7);
      expect((await p1.time({ targetMs: 1, batches: 1 })).ms).toBeGreaterThan(0);
      p1.destroy();
      p2.destroy();
      // The resident buffers outlive the plans that bound them.
      expect(new Float32Array(await readBuffer(device, res.buffer('w', 1)!))[0]).toBe(7);
    } finally {
      res.destroy();
    }
  });

  it('timed runs rotate through every weight bank (each bank counts the runs that bound it)', async () => {
    const { device } = gpu();
    const plan = scalePlan(64, 1, { count: true });
    const res = uploadResident(
      device,
      plan.buffers.filter((b) => b.data),
      { banks: 3 },
    );
    try {
      const p = await preparePlan(device, plan, { resident: res });
      try {
        await p.time({ targetMs: 1, batches: 2 });
      } finally {
        p.destroy();
      }
      const runs = await Promise.all(
        [0, 1, 2].map(async (b) => new Float32Array(await readBuffer(device, res.buffer('w', b)!))[1]!),
      );
      for (const r of runs) expect(r, `runs per bank: ${runs.join(', ')}`).toBeGreaterThan(0);
    } finally {
      res.destroy();
    }
  });

  it('destroy() frees every buffer the plan made: none can be written afterwards', async () => {
    const { device } = gpu();
    const made: GPUBuffer[] = [];
    // The real device, with every buffer it creates noted.
    const watched = new Proxy(device, {
      get(target, key) {
        if (key === 'createBuffer')
          return (d: GPUBufferDescriptor) => {
            const b = target.createBuffer(d);
            made.push(b);
            return b;
          };
        const v: unknown = Reflect.get(target, key, target);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const p = await preparePlan(watched, scalePlan(64, 2), { banks: 2 });
    await p.run();
    expect(made.length).toBeGreaterThanOrEqual(4); // a, two banks of w, out
    p.destroy();
    for (const b of made) {
      device.pushErrorScope('validation');
      device.queue.writeBuffer(b, 0, new Float32Array([1]));
      expect((await device.popErrorScope())?.message, b.label).toMatch(/destroyed/i);
    }
  });

  it('a compile error carries positions into the code; a bad binding is a validation error naming the pass', async () => {
    const { device } = gpu();
    const plan = scalePlan(64, 1);
    const broken = plan.passes[0]!.wgsl.replace('out[i] = a[i]', 'out[i] = b[i]');
    const err = await preparePlan(device, plan, { wgslOverride: { 0: broken } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WgslCompileError);
    const c = err as WgslCompileError;
    expect(c.pass).toBe('scale');
    expect(c.messages.some((m) => m.type === 'error' && m.lineNum === 8)).toBe(true);
    const unbound = { ...plan, passes: [{ ...plan.passes[0]!, bindings: ['a', 'nope', 'out'] }] };
    await expect(preparePlan(device, unbound)).rejects.toBeInstanceOf(GpuValidationError);
    await expect(preparePlan(device, unbound)).rejects.toThrow(/scale: binds nope/);
    // One-shot use: prepare, run, read, destroy.
    const r = await runPlan(device, plan, { timing: { targetMs: 1, batches: 1 } });
    expect(new Float32Array(r.output)[10]).toBe(10);
    expect(r.timing!.ms).toBeGreaterThan(0);
  });
});

/**
 * A 3-D grid of 64-invocation workgroups reading their place through the grid slice: element
 * (workgroup, lane) gets its linear index, and `hits` counts every write, so a slice run twice or a
 * workgroup never run shows.
 */
function slicedPlan(grid: [number, number, number]): KernelPlan {
  const n = grid[0] * grid[1] * grid[2] * 64;
  const table = withGridSlice({ out: readWrite('array<f32>'), hits: readWrite('array<atomic<u32>>') });
  const wgsl = `${bindingDecls(table)}
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lid: u32, ${GRID_SLICE_PARAM}) {
${gridSliceLets('wg', 'nwg').join('\n')}
  let i = ((wg.z * nwg.y + wg.y) * nwg.x + wg.x) * 64u + lid;
  out[i] = f32(i);
  atomicAdd(&hits[i], 1u);
}
`;
  return {
    buffers: [
      { name: 'out', kind: 'storage', size: n * 4 },
      { name: 'hits', kind: 'storage', size: n * 4 },
    ],
    passes: [
      {
        label: 'sliced',
        wgsl,
        entryPoint: 'main',
        workgroups: grid,
        bindings: bindingNames(table),
        workgroupSize: 64,
        workgroupBytes: 0,
      },
    ],
    output: 'out',
    outputType: 'f32',
    mainPass: 0,
  };
}

describe('bounded submissions (the grid slice)', () => {
  const grid: [number, number, number] = [5, 3, 2];
  const n = 5 * 3 * 2 * 64;

  it('a pass that reads the grid slice runs in several submissions, every workgroup exactly once', async () => {
    const { device } = gpu();
    const p = await preparePlan(device, slicedPlan(grid));
    try {
      const fractions: number[] = [];
      await p.run({ onSubmit: (f) => fractions.push(f) });
      expect(p.sliced(0)).toBe(true);
      // No estimate: one workgroup first, then more as the first shows the pace.
      expect(fractions.length).toBeGreaterThan(1);
      expect(fractions[0]).toBe(0);
      expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
      const out = new Float32Array(await p.read('out'));
      const hits = new Uint32Array(await p.read('hits'));
      expect(out).toEqual(Float32Array.from({ length: n }, (_, i) => i));
      expect([...new Set(hits)]).toEqual([1]);
    } finally {
      p.destroy();
    }
  });

  it('a cancel between slices stops the run: nothing past the slices submitted ever runs', async () => {
    const { device } = gpu();
    let submits = 0;
    const p = await preparePlan(device, slicedPlan(grid), { cancelled: () => submits >= 2 });
    try {
      await expect(p.run({ onSubmit: () => submits++ })).rejects.toThrow(CancelledError);
      await device.queue.onSubmittedWorkDone();
      const hits = new Uint32Array(await p.read('hits'));
      const ran = hits.reduce((a, h) => a + h, 0);
      expect(submits).toBe(2);
      expect(ran).toBeGreaterThan(0);
      expect(ran).toBeLessThan(n); // the rest was never submitted
      expect(ran % 64).toBe(0); // whole workgroups
    } finally {
      p.destroy();
    }
  });

  it('a long run is timed one sliced run a batch, between timestamps of its first and last slice', async () => {
    const { device } = gpu();
    const p = await preparePlan(device, slicedPlan(grid));
    try {
      await p.run();
      // The run is declared long (upperMs past the budget): no probe, no calibration, one run a batch.
      const t = await p.time({ targetMs: 5, batches: 2, upperMs: 10_000 });
      expect(t.runs).toBe(1);
      expect(t.samples.length).toBeGreaterThanOrEqual(2);
      expect(t.ms).toBeGreaterThan(0);
      const hits = new Uint32Array(await p.read('hits'));
      // Every workgroup ran once a batch, all alike; a timer that read 0 (a coarse one, on some hosts)
      // re-timed the batches by the wall clock after its own two.
      const each = [...new Set(hits)];
      expect(each).toHaveLength(1);
      if (t.method === 'timestamp') expect(each[0]).toBe(1 + t.samples.length);
      else expect(each[0]).toBeGreaterThanOrEqual(1 + 2 + t.samples.length);
      // A cancel stops such a timing between its slices too.
      let calls = 0;
      await expect(
        p.time({ targetMs: 5, batches: 2, upperMs: 10_000, cancelled: () => ++calls > 2 }),
      ).rejects.toThrow(CancelledError);
    } finally {
      p.destroy();
    }
  });

  it('an edited kernel that does not read the grid slice runs whole (and right): it cannot be cut', async () => {
    const { device } = gpu();
    const plan = slicedPlan(grid);
    const whole = `@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<storage, read_write> hits: array<atomic<u32>>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = ((wg.z * nwg.y + wg.y) * nwg.x + wg.x) * 64u + lid;
  out[i] = f32(i);
  atomicAdd(&hits[i], 1u);
}
`;
    const p = await preparePlan(device, plan, { wgslOverride: { 0: whole } });
    try {
      const submits: number[] = [];
      await p.run({ onSubmit: (f) => submits.push(f) });
      expect(p.sliced(0)).toBe(false);
      expect(submits).toEqual([0]);
      expect(new Float32Array(await p.read('out'))).toEqual(Float32Array.from({ length: n }, (_, i) => i));
    } finally {
      p.destroy();
    }
  });
});
