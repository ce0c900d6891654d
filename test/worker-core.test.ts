// The worker core on Dawn + SwiftShader: the same code the web worker runs, driven through the protocol.
import { describe, expect, it } from 'vitest';
import { badByOwner, badMask, errorField } from '../src/app/views/analysis';
import { KERNELS } from '../src/kernels';
import type { RunConfig } from '../src/kernels/family';
import { createGpuCore, monotonic, type GpuCore } from '../src/workers/core';
import { lineCount, noteSuffixMessages } from '../src/workers/run';
import type { RunOutcome, WorkerRequest, WorkerRequestBody, WorkerResponse } from '../src/workers/protocol';
import { HOST_SUFFIX_MARKER } from '../src/kernels/gpu/instrument';
import { getDawnGpu, withDawnFeature } from './gpu';

/** A core whose posts are structured-cloned with their transfer lists, as postMessage would. */
function harness(gpu: GPU | undefined) {
  const messages: WorkerResponse[] = [];
  const core = createGpuCore({
    gpu,
    kernels: KERNELS,
    post: (msg, transfer) => messages.push(structuredClone(msg, { transfer })),
  });
  let id = 0;
  const send = async (req: Exclude<WorkerRequestBody, { type: 'cancel' }>) => {
    const rid = ++id;
    await core.handle({ ...req, id: rid } as WorkerRequest);
    return messages.filter((m) => 'id' in m && m.id === rid);
  };
  return { core, messages, send, nextId: () => id + 1 };
}

const base = (
  kernel: string,
  params: Record<string, number | string> = {},
  over: Partial<RunConfig> = {},
): RunConfig => ({
  kernel,
  arm: 'scalar',
  plane: 4,
  data: { source: 'reference', seed: 0 },
  params: { ...KERNELS.get(kernel).defaults, ...params },
  ...over,
});
const TIMING = { targetMs: 2, batches: 2 };

function outcomeOf(msgs: WorkerResponse[]): RunOutcome {
  const r = msgs.find((m) => m.type === 'run-result');
  if (!r || r.type !== 'run-result')
    throw new Error(
      `no run-result: ${JSON.stringify(msgs.map((m) => ('message' in m ? m.message : m.type)))}`,
    );
  return r.outcome;
}

// One shared core: the device opens once for the file (SwiftShader on two cores is not fast).
// Workgroup memory is not zero-filled by this Dawn (test/gpu.ts getFastTestGpu says why); the worker core
// opens its own device on it.
const h = harness(await withDawnFeature('disable_workgroup_init', async () => getDawnGpu()));
const core: GpuCore = h.core;

describe('progress as posted', () => {
  it('never steps back (a timing that doubles its batches) and never passes 1', () => {
    const at = monotonic();
    expect([0.1, 0.58, 0.55, 0.6, 1.2, 0.9].map(at)).toEqual([0.1, 0.58, 0.58, 0.6, 1, 1]);
    expect(monotonic()(0.3)).toBe(0.3); // each request starts afresh
  });
});

describe('worker core on Dawn/SwiftShader', () => {
  it('opens the device and reports the adapter', async () => {
    const msgs = await h.send({ type: 'init' });
    const ready = msgs.find((m) => m.type === 'ready');
    expect(ready?.type === 'ready' && ready.plane).toBeGreaterThanOrEqual(4);
    expect(ready?.type === 'ready' && ready.deviceId).toMatch(/#plane\d+$/);
    expect(core.current()).toBeDefined();
  });

  it('generates the editable kernel text and the host suffix separately', async () => {
    const msgs = await h.send({ type: 'generate', config: base('mmq-q8-naive', { m: 16, n: 16, k: 32 }) });
    const g = msgs[0];
    if (g?.type !== 'generated') throw new Error(JSON.stringify(msgs));
    expect(g.kernel.problems).toEqual([]);
    expect(g.kernel.plane).toBe(4);
    const main = g.kernel.passes[g.kernel.mainPass]!;
    expect(main.wgsl).toContain('store_out(');
    expect(main.wgsl).not.toContain(HOST_SUFFIX_MARKER);
    expect(main.suffix).toMatch(/^\n\/\/ ---- host suffix/);
    expect(g.kernel.phases).toContain('scalar-epilogue');
    expect(main.workgroups).toEqual([1, 1, 1]);
    // A plan of several passes offers every pass's text, the GEMM as the main one.
    const [s] = await h.send({ type: 'generate', config: base('coopmat-f16', { staging: 'prepass' }) });
    if (s?.type !== 'generated') throw new Error('no kernel');
    expect(s.kernel.passes.map((p) => p.label)).toEqual([
      'coopmat-f16 weight Q4_K to f16',
      'coopmat-f16 activation to f16 tiles',
      'coopmat-f16 scalar 2x2x1x1',
    ]);
    expect(s.kernel.mainPass).toBe(2);
  });

  it('reports validate() problems, and the limits of the generated plan, instead of a kernel', async () => {
    const bad = base('mmq-q8-tiled', { m: 30, n: 64, k: 32 });
    const [g] = await h.send({ type: 'generate', config: bad });
    expect(g?.type === 'generated' && g.kernel.problems).toEqual([
      'm = 30 is not a multiple of 32 (the 32-row output tile: this kernel has no tail guards)',
    ]);
    const [r] = (await h.send({ type: 'run', config: bad, instrument: false })).filter(
      (m) => m.type !== 'progress',
    );
    expect(r).toMatchObject({ type: 'error', kind: 'shape' });
    expect(r?.type === 'error' && r.message).toMatch(/32-row output tile/);
    const [l] = await h.send({ type: 'generate', config: base('mmq-q4k-tile', { wm: 16, wn: 16 }) });
    expect(g?.type === 'generated' && l?.type === 'generated' && l.kernel.problems.join()).toMatch(
      /invocations per workgroup > this adapter's/,
    );
  });

  it.each([
    ['hello-wmma', base('hello-wmma')],
    ['hello-mma', base('hello-mma')],
    ['mmq-q8-naive', base('mmq-q8-naive', { m: 16, n: 32, k: 64 })],
    ['mmq-q8-tiled', base('mmq-q8-tiled', { m: 32, n: 64, k: 32 })],
    ['mmq-q4k-blk', base('mmq-q4k-blk', { m: 32, n: 64, k: 256 })],
    ['mmq-q4k-rt (tails)', base('mmq-q4k-rt', { m: 17, n: 50, k: 256 })],
    ['mmq-q4k-tile (tails)', base('mmq-q4k-tile', { m: 20, n: 40, k: 256, wm: 1, wn: 2, rm: 2, rn: 1 })],
    ['moe-q4k-id', base('moe-q4k-id', { tokens: 8, n: 64, k: 256, experts: 4, topk: 2 })],
    ['coopmat-f16', base('coopmat-f16', { m: 32, n: 32, k: 256, staging: 'one-pass' })],
    [
      'coopmat-f16, B decoded in the split GEMM (tails)',
      base('coopmat-f16', { m: 20, n: 40, k: 256, staging: 'in-gemm' }),
    ],
  ])('%s matches its oracle and its recorded ownership matches the analytic one', async (_name, config) => {
    const msgs = await h.send({ type: 'run', config, timing: TIMING, instrument: true });
    const o = outcomeOf(msgs);
    expect(o.verdict.pass).toBe(true);
    expect(o.edited).toBe(false);
    expect(o.output.length).toBe(o.rows * o.cols);
    expect(o.timing!.ms).toBeGreaterThan(0);
    expect(o.throughput!.value).toBeGreaterThan(0);
    expect(o.config.plane).toBe(4);
    const progress = msgs.flatMap((m) => (m.type === 'progress' ? [m] : []));
    expect(progress.length).toBeGreaterThan(3);
    // Each stage says what it waits on: the GPU with the ms it has submitted, or the CPU (a client
    // replacing a stuck worker drains the first and terminates the second at once).
    expect(progress.find((m) => m.stage === 'running')).toMatchObject({ busy: 'gpu' });
    expect(progress.find((m) => m.stage === 'checking against the oracle')).toMatchObject({ busy: 'cpu' });
    expect(progress.some((m) => m.busy === 'gpu' && typeof m.gpuMs === 'number')).toBe(true);
    const fractions = progress.map((m) => m.fraction);
    expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
    expect(o.compileMs).toBeGreaterThanOrEqual(0);
    const rec = o.ownership!;
    expect(rec.count.every((c) => c === 1)).toBe(true);
    // Every phase with a known (non-opaque) analytic map assigns each element to the lane that stores it.
    const known = Object.entries(o.analyticOwnership!).filter(([, m]) => m.count.some((c) => c > 0));
    expect(known.length).toBeGreaterThan(0);
    for (const [phase, analytic] of known) {
      const same = (a: Uint32Array, b: Uint32Array) => Buffer.from(a.buffer).equals(Buffer.from(b.buffer));
      expect({
        phase,
        wg: same(rec.workgroup, analytic.workgroup),
        plane: same(rec.plane, analytic.plane),
        lane: same(rec.lane, analytic.lane),
      }).toEqual({ phase, wg: true, plane: true, lane: true });
    }
    if (o.fullPrecision) expect(o.fullPrecision.length).toBe(o.output.length);
  });

  it('times a multi-pass plan whole and pass by pass, as separate figures; throughput is the whole plan', async () => {
    const config = base('coopmat-f16', {
      m: 32,
      n: 64,
      k: 256,
      wm: 2,
      wn: 1,
      rm: 1,
      rn: 2,
      staging: 'prepass',
    });
    const msgs = await h.send({ type: 'run', config, timing: TIMING, instrument: false });
    const o = outcomeOf(msgs);
    expect(o.verdict.pass).toBe(true);
    const t = o.timing!;
    expect(t.passes?.map((p) => p.label)).toEqual([
      'coopmat-f16 weight Q4_K to f16',
      'coopmat-f16 activation to f16 tiles',
      'coopmat-f16 scalar 2x1x1x2',
    ]);
    expect(t.passes!.every((p) => p.ms > 0)).toBe(true);
    expect(t.runs).toBeGreaterThanOrEqual(1);
    expect(t.samples.length).toBeGreaterThanOrEqual(2);
    expect(o.throughput).toEqual({ value: (2 * 32 * 64 * 256) / (t.ms * 1e-3) / 1e12, unit: 'TFLOP/s' });
    // Progress within the timing stage: a message per batch.
    expect(msgs.some((m) => m.type === 'progress' && /pass 3 of 3: batch 1 of/.test(m.stage))).toBe(true);
    // One pass: no per-pass figures; an int8 family's unit.
    const one = outcomeOf(
      await h.send({ type: 'run', config: base('mmq-q4k-rt'), timing: TIMING, instrument: false }),
    );
    expect(one.timing!.passes).toBeUndefined();
    expect(one.throughput!.unit).toBe('int8 TOPS');
    // Untimed: no timing, no throughput.
    const untimed = outcomeOf(await h.send({ type: 'run', config: base('mmq-q4k-rt'), instrument: false }));
    expect(untimed.timing).toBeUndefined();
    expect(untimed.runWallMs).toBeGreaterThan(0);
  });

  it('times each pass of a plan on its own: the GEMM, most of the work, is the slowest pass', async () => {
    // The GEMM does 32 x 64 x 512 multiply-adds; the pre-passes convert 64 x 512 and 32 x 512 values.
    const config = base('coopmat-f16', {
      m: 32,
      n: 64,
      k: 512,
      wm: 2,
      wn: 1,
      rm: 1,
      rn: 2,
      staging: 'prepass',
    });
    const o = outcomeOf(await h.send({ type: 'run', config, timing: TIMING, instrument: false }));
    const [weight, activation, gemm] = o.timing!.passes!.map((p) => p.ms) as [number, number, number];
    expect(gemm, `passes ${weight}, ${activation}, ${gemm} ms`).toBeGreaterThan(
      3 * Math.max(weight, activation),
    );
  });

  it('runs the user edit: a lane-3 bug shows up only in lane 3, with the real ownership recorded', async () => {
    const config = base('mmq-q8-naive', { m: 16, n: 16, k: 32 });
    const [g] = await h.send({ type: 'generate', config });
    if (g?.type !== 'generated') throw new Error('no kernel');
    const kernel = g.kernel.passes[0]!;
    const broken = kernel.wgsl.replace(
      /store_out\(([^;]*?), ([^;]*)\);/,
      'store_out($1, ($2) * select(1.0, 2.0, lane == 3u));',
    );
    expect(broken).not.toBe(kernel.wgsl);
    const o = outcomeOf(await h.send({ type: 'run', config, wgsl: broken, instrument: true }));
    expect(o.edited).toBe(true);
    expect(o.verdict.pass).toBe(false);
    const err = errorField(o.output, o.oracle);
    const mask = badMask(o.output, o.oracle, err, o.verdict.gate);
    const summary = badByOwner(mask, o.ownership);
    expect(summary.byLane.map(([lane]) => lane)).toEqual([3]);
    expect(summary.sentence).toMatch(/belong to .*lane 3/);
  });

  it('maps a compile error onto the editor line the user broke', async () => {
    const config = base('mmq-q8-naive', { m: 16, n: 16, k: 32 });
    const [g] = await h.send({ type: 'generate', config });
    if (g?.type !== 'generated') throw new Error('no kernel');
    const kernel = g.kernel.passes[0]!;
    const lines = kernel.wgsl.split('\n');
    const at = lines.findIndex((l) => l.includes('store_out('));
    lines[at] = lines[at]!.replace('store_out(', 'store_oops(');
    const [r] = (await h.send({ type: 'run', config, wgsl: lines.join('\n'), instrument: true })).filter(
      (m) => m.type !== 'progress',
    );
    if (r?.type !== 'compile-error') throw new Error(JSON.stringify(r));
    expect(r.editorLines).toBe(lines.length);
    const e = r.messages.find((m) => m.type === 'error')!;
    expect(e.lineNum).toBe(at + 1);
    expect(e.message).toMatch(/store_oops/);
    expect(r.code.endsWith(kernel.suffix)).toBe(true);
  });

  it('says so when an error lies in the host suffix', async () => {
    const config = base('mmq-q8-naive', { m: 16, n: 16, k: 32 });
    const [g] = await h.send({ type: 'generate', config });
    if (g?.type !== 'generated') throw new Error('no kernel');
    // Renaming the output array breaks the suffix's store, not the user's text.
    const text = g.kernel.passes[0]!.wgsl;
    const renamed = text.replace(/var<storage, read_write> out\b/, 'var<storage, read_write> out2');
    expect(renamed).not.toBe(text);
    const [r] = (await h.send({ type: 'run', config, wgsl: renamed, instrument: false })).filter(
      (m) => m.type !== 'progress',
    );
    if (r?.type !== 'compile-error') throw new Error(JSON.stringify(r));
    const e = r.messages.find((m) => m.type === 'error')!;
    expect(e.lineNum).toBeGreaterThan(r.editorLines);
    expect(e.message).toMatch(/^in host suffix \(line \d+ after your code\)/);
  });

  it('cancels a queued run at its next stage boundary', async () => {
    const config = base('mmq-q4k-blk', { m: 32, n: 64, k: 256 });
    const id = h.nextId();
    const pending = h.send({ type: 'run', config, timing: TIMING, instrument: true });
    await core.handle({ type: 'cancel', id });
    const msgs = await pending;
    expect(msgs.at(-1)).toEqual({ type: 'cancelled', id });
  });

  it('cancels a run in flight after its first stage', async () => {
    const seen: WorkerResponse[] = [];
    let target = 0;
    const mid = createGpuCore({
      gpu: getDawnGpu(),
      kernels: KERNELS,
      post: (msg) => {
        seen.push(msg);
        // The user presses Cancel as soon as the run reports progress.
        if (msg.type === 'progress' && msg.id === target) void mid.handle({ type: 'cancel', id: target });
      },
    });
    target = 2;
    await mid.handle({ type: 'init', id: 1 });
    await mid.handle({
      type: 'run',
      id: 2,
      config: base('mmq-q8-naive', { m: 16, n: 16, k: 32 }),
      timing: TIMING,
      instrument: true,
    });
    expect(seen.filter((m) => 'id' in m && m.id === 2).map((m) => m.type)).toEqual(['progress', 'cancelled']);
    mid.current()?.device.destroy();
  });

  it('reports a lost device and re-opens it on the next request', async () => {
    await h.send({ type: 'lose-device' });
    await new Promise((r) => setTimeout(r, 50));
    expect(h.messages.some((m) => m.type === 'device-lost')).toBe(true);
    expect(core.current()).toBeUndefined();
    const msgs = await h.send({
      type: 'run',
      config: base('mmq-q8-naive', { m: 16, n: 16, k: 32 }),
      instrument: false,
    });
    expect(msgs.some((m) => m.type === 'ready')).toBe(true);
    expect(outcomeOf(msgs).verdict.pass).toBe(true);
  });

  it('answers unknown kernels and a missing WebGPU with clear errors', async () => {
    const [r] = await h.send({
      type: 'generate',
      config: { ...base('mmq-q8-naive'), kernel: 'nope' },
    });
    expect(r).toMatchObject({ type: 'error', kind: 'shape' });
    expect(r?.type === 'error' && r.message).toBe(`unknown kernel family 'nope' (${KERNELS.ids.join(', ')})`);
    const bare = harness(undefined);
    const [u] = await bare.send({ type: 'init' });
    expect(u).toMatchObject({ type: 'error', kind: 'unsupported' });
    expect(u?.type === 'error' && u.message).toMatch(/navigator.gpu is missing/);
  });
});

describe('suffix message mapping', () => {
  it('counts editor lines and notes only messages past them', () => {
    expect(lineCount('a\nb\nc')).toBe(3);
    const m = { type: 'error' as const, message: 'x', lineNum: 4, linePos: 1, offset: 0, length: 1 };
    expect(
      noteSuffixMessages([m, { ...m, lineNum: 3 }], 3).map((x) => x.message.startsWith('in host suffix')),
    ).toEqual([true, false]);
  });
});
