// The worker core on Dawn + SwiftShader: the same code the web worker runs, driven through the protocol.
import { describe, expect, it } from 'vitest';
import { badByOwner, badMask, errorField } from '../src/app/views/analysis';
import { KERNEL_FAMILIES } from '../src/kernels';
import type { ProblemConfig } from '../src/kernels/family';
import { createGpuCore, lineCount, noteSuffixMessages, type GpuCore } from '../src/workers/core';
import type { RunOutcome, WorkerRequest, WorkerRequestBody, WorkerResponse } from '../src/workers/protocol';
import { HOST_SUFFIX_MARKER } from '../src/kernels/gpu/instrument';
import { getDawnGpu } from './gpu';

/** A core whose posts are structured-cloned with their transfer lists, as postMessage would. */
function harness(gpu: GPU | undefined) {
  const messages: WorkerResponse[] = [];
  const core = createGpuCore({
    gpu,
    families: KERNEL_FAMILIES,
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
  kernel: ProblemConfig['kernel'],
  m: number,
  n: number,
  k: number,
  extra: Partial<ProblemConfig> = {},
): ProblemConfig => ({
  kernel,
  m,
  n,
  k,
  experts: 1,
  topk: 1,
  ytiles: 1,
  tile: { wm: 2, wn: 4, rm: 1, rn: 1 },
  arm: 'scalar',
  plane: 4,
  dataSource: 'seed',
  dataSeed: 0,
  ...extra,
});

function outcomeOf(msgs: WorkerResponse[]): RunOutcome {
  const r = msgs.find((m) => m.type === 'run-result');
  if (!r || r.type !== 'run-result')
    throw new Error(
      `no run-result: ${JSON.stringify(msgs.map((m) => ('message' in m ? m.message : m.type)))}`,
    );
  return r.outcome;
}

// One shared core: the device opens once for the file (SwiftShader on two cores is not fast).
const h = harness(getDawnGpu());
const core: GpuCore = h.core;

describe('worker core on Dawn/SwiftShader', () => {
  it('opens the device and reports the adapter', async () => {
    const msgs = await h.send({ type: 'init' });
    const ready = msgs.find((m) => m.type === 'ready');
    expect(ready?.type === 'ready' && ready.plane).toBeGreaterThanOrEqual(4);
    expect(ready?.type === 'ready' && ready.deviceId).toMatch(/#plane\d+$/);
    expect(core.current()).toBeDefined();
  });

  it('generates the editable kernel text and the host suffix separately', async () => {
    const msgs = await h.send({ type: 'generate', config: base('mmq-q8-naive', 16, 16, 32) });
    const g = msgs[0];
    if (g?.type !== 'generated') throw new Error(JSON.stringify(msgs));
    expect(g.kernel.problems).toEqual([]);
    expect(g.kernel.wgsl).toContain('store_out(');
    expect(g.kernel.wgsl).not.toContain(HOST_SUFFIX_MARKER);
    expect(g.kernel.suffix).toMatch(/^\n\/\/ ---- host suffix/);
    expect(g.kernel.phases).toContain('scalar-epilogue');
    expect(g.kernel.workgroups).toEqual([1, 1, 1]);
  });

  it('reports validate() problems instead of a kernel for a bad shape', async () => {
    const [g] = await h.send({ type: 'generate', config: base('mmq-q8-tiled', 30, 64, 32) });
    expect(g?.type === 'generated' && g.kernel.problems.join(' ')).toMatch(
      /m = 30 is not a multiple of BM 32/,
    );
    const [r] = (
      await h.send({ type: 'run', config: base('mmq-q8-tiled', 30, 64, 32), iters: 0, instrument: false })
    ).filter((m) => m.type !== 'progress');
    expect(r).toMatchObject({ type: 'error', kind: 'shape' });
    expect(r?.type === 'error' && r.message).toMatch(/BM 32/);
  });

  it.each([
    ['hello-wmma', base('hello-wmma', 16, 16, 16, { tile: { wm: 1, wn: 1, rm: 1, rn: 1 } })],
    ['hello-mma', base('hello-mma', 16, 8, 32, { tile: { wm: 1, wn: 1, rm: 1, rn: 1 } })],
    ['mmq-q8-naive', base('mmq-q8-naive', 16, 32, 64)],
    ['mmq-q8-tiled', base('mmq-q8-tiled', 32, 64, 32)],
    ['mmq-q4k-blk', base('mmq-q4k-blk', 32, 64, 256)],
    ['mmq-q4k-rt (tails)', base('mmq-q4k-rt', 17, 50, 256)],
    ['mmq-q4k-tile (tails)', base('mmq-q4k-tile', 20, 40, 256, { tile: { wm: 1, wn: 2, rm: 2, rn: 1 } })],
    ['moe-q4k-id', base('moe-q4k-id', 8, 64, 256, { experts: 4, topk: 2 })],
    ['coopmat-f16', base('coopmat-f16', 32, 32, 256, { tile: { wm: 2, wn: 2, rm: 1, rn: 1 } })],
    [
      'coopmat-f16, B decoded in the split GEMM (tails)',
      base('coopmat-f16', 20, 40, 256, { tile: { wm: 2, wn: 2, rm: 1, rn: 1 }, staging: 'in-gemm' }),
    ],
  ])('%s matches its oracle and its recorded ownership matches the analytic one', async (_name, config) => {
    const msgs = await h.send({ type: 'run', config, iters: 2, instrument: true });
    const o = outcomeOf(msgs);
    expect(o.verdict.pass).toBe(true);
    expect(o.edited).toBe(false);
    expect(o.output.length).toBe(o.rows * o.cols);
    expect(o.msPerDispatch).toBeGreaterThan(0);
    expect(o.tops).toBeGreaterThan(0);
    expect(msgs.filter((m) => m.type === 'progress').length).toBeGreaterThan(3);
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

  it('times a multi-pass plan whole and pass by pass; TOPS are the whole plan figure', async () => {
    const config = base('coopmat-f16', 32, 64, 256, {
      tile: { wm: 2, wn: 1, rm: 1, rn: 2 },
      staging: 'prepass',
    });
    const o = outcomeOf(await h.send({ type: 'run', config, iters: 3, instrument: false }));
    expect(o.verdict.pass).toBe(true);
    expect(o.passMs?.map((p) => p.label)).toEqual([
      'coopmat-f16 weight Q4_K to f16',
      'coopmat-f16 activation to f16 tiles',
      'coopmat-f16 scalar 2x1x1x2',
    ]);
    expect(o.passMs!.every((p) => p.ms > 0)).toBe(true);
    expect(o.msPerDispatch).toBe(o.passMs![2]!.ms); // the main pass: the GEMM the editor shows
    expect(o.planMs).toBeGreaterThan(0);
    expect(o.tops).toBeCloseTo((2 * 32 * 64 * 256) / (o.planMs! * 1e-3) / 1e12, 6);
    // One pass: no plan figures, TOPS from the dispatch.
    const one = outcomeOf(
      await h.send({ type: 'run', config: { ...config, staging: 'one-pass' }, iters: 2, instrument: false }),
    );
    expect(one.planMs).toBeUndefined();
    expect(one.passMs).toBeUndefined();
    expect(one.tops).toBeCloseTo((2 * 32 * 64 * 256) / (one.msPerDispatch! * 1e-3) / 1e12, 6);
  });

  it('runs the user edit: a lane-3 bug shows up only in lane 3, with the real ownership recorded', async () => {
    const config = base('mmq-q8-naive', 16, 16, 32);
    const [g] = await h.send({ type: 'generate', config });
    if (g?.type !== 'generated') throw new Error('no kernel');
    const broken = g.kernel.wgsl.replace(
      /store_out\(([^;]*?), ([^;]*)\);/,
      'store_out($1, ($2) * select(1.0, 2.0, lane == 3u));',
    );
    expect(broken).not.toBe(g.kernel.wgsl);
    const o = outcomeOf(await h.send({ type: 'run', config, wgsl: broken, iters: 0, instrument: true }));
    expect(o.edited).toBe(true);
    expect(o.verdict.pass).toBe(false);
    const err = errorField(o.output, o.oracle);
    const mask = badMask(o.output, o.oracle, err, o.verdict.gate);
    const summary = badByOwner(mask, o.ownership);
    expect(summary.byLane.map(([lane]) => lane)).toEqual([3]);
    expect(summary.sentence).toMatch(/belong to .*lane 3/);
  });

  it('maps a compile error onto the editor line the user broke', async () => {
    const config = base('mmq-q8-naive', 16, 16, 32);
    const [g] = await h.send({ type: 'generate', config });
    if (g?.type !== 'generated') throw new Error('no kernel');
    const lines = g.kernel.wgsl.split('\n');
    const at = lines.findIndex((l) => l.includes('store_out('));
    lines[at] = lines[at]!.replace('store_out(', 'store_oops(');
    const [r] = (
      await h.send({ type: 'run', config, wgsl: lines.join('\n'), iters: 0, instrument: true })
    ).filter((m) => m.type !== 'progress');
    if (r?.type !== 'compile-error') throw new Error(JSON.stringify(r));
    expect(r.editorLines).toBe(lines.length);
    const e = r.messages.find((m) => m.type === 'error')!;
    expect(e.lineNum).toBe(at + 1);
    expect(e.message).toMatch(/store_oops/);
    expect(r.code.endsWith(g.kernel.suffix)).toBe(true);
  });

  it('says so when an error lies in the host suffix', async () => {
    const config = base('mmq-q8-naive', 16, 16, 32);
    const [g] = await h.send({ type: 'generate', config });
    if (g?.type !== 'generated') throw new Error('no kernel');
    // Renaming the output array breaks the suffix's store, not the user's text.
    const renamed = g.kernel.wgsl.replace(/var<storage, read_write> out\b/, 'var<storage, read_write> out2');
    expect(renamed).not.toBe(g.kernel.wgsl);
    const [r] = (await h.send({ type: 'run', config, wgsl: renamed, iters: 0, instrument: false })).filter(
      (m) => m.type !== 'progress',
    );
    if (r?.type !== 'compile-error') throw new Error(JSON.stringify(r));
    const e = r.messages.find((m) => m.type === 'error')!;
    expect(e.lineNum).toBeGreaterThan(r.editorLines);
    expect(e.message).toMatch(/^in host suffix \(line \d+ after your code\)/);
  });

  it('cancels a queued run at its next stage boundary', async () => {
    const config = base('mmq-q4k-blk', 32, 64, 256);
    const id = h.nextId();
    const pending = h.send({ type: 'run', config, iters: 4, instrument: true });
    await core.handle({ type: 'cancel', id });
    const msgs = await pending;
    expect(msgs.at(-1)).toEqual({ type: 'cancelled', id });
  });

  it('cancels a run in flight after its first stage', async () => {
    const seen: WorkerResponse[] = [];
    let target = 0;
    const mid = createGpuCore({
      gpu: getDawnGpu(),
      families: KERNEL_FAMILIES,
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
      config: base('mmq-q8-naive', 16, 16, 32),
      iters: 2,
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
      config: base('mmq-q8-naive', 16, 16, 32),
      iters: 0,
      instrument: false,
    });
    expect(msgs.some((m) => m.type === 'ready')).toBe(true);
    expect(outcomeOf(msgs).verdict.pass).toBe(true);
  });

  it('answers unknown kernels and a missing WebGPU with clear errors', async () => {
    const [r] = await h.send({
      type: 'generate',
      config: { ...base('mmq-q8-naive', 16, 16, 32), kernel: 'nope' as ProblemConfig['kernel'] },
    });
    expect(r).toMatchObject({ type: 'error', kind: 'shape', message: "unknown kernel family 'nope'" });
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
