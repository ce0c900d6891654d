// The worker core and its run path (src/workers/core.ts, run.ts) on CPU devices (test/cpuDevice.ts), the
// toy family's kernel as its JavaScript twin (test/toyTwin.ts): what a run reports, stage by stage, and
// how compile errors, a cancel, a lost device and a missing WebGPU are answered. test/worker-core.test.ts
// drives the same core on Dawn with the real families; this file pins its decisions without a GPU.
import { describe, expect, it } from 'vitest';
import type { KernelFamily, RunConfig } from '../src/kernels/family';
import { HOST_SUFFIX_MARKER } from '../src/kernels/gpu/instrument';
import type { KernelPlan } from '../src/kernels/gpu/plan';
import { createRegistry, type Registry } from '../src/kernels/registry';
import { createGpuCore } from '../src/workers/core';
import type { RunOutcome, WorkerRequest, WorkerRequestBody, WorkerResponse } from '../src/workers/protocol';
import { lineCount, noteSuffixMessages } from '../src/workers/run';
import { handleTuneRequest } from '../src/workers/tune';
import { cpuGpu, type CpuAdapterOptions } from './cpuDevice';
import { TOY_ID, TOY_KERNELS, toyCatalog, toyFamily } from './toyFamily';
import { toyScheduleOf, toyTwin } from './toyTwin';

/** GPU ns a run of the toy takes: 0.1 ms a doubling of its workgroup past 4. */
const toyNs = (code: string) => 1e5 * Math.log2(toyScheduleOf(code).wx / 2);

/** A core on a CPU adapter, its posts structured-cloned with their transfer lists as postMessage does. */
function harness(
  o: CpuAdapterOptions & { kernels?: Registry<KernelFamily>; tune?: boolean; noGpu?: boolean } = {},
) {
  const { gpu, devices } = cpuGpu({ kernel: toyTwin(), dispatchNs: toyNs, ...o });
  const messages: WorkerResponse[] = [];
  const core = createGpuCore({
    gpu: o.noGpu ? undefined : gpu,
    kernels: o.kernels ?? TOY_KERNELS,
    post: (msg, transfer) => messages.push(structuredClone(msg, { transfer })),
    ...(o.tune
      ? {
          tune: (req, ctx) =>
            handleTuneRequest({ ...ctx, isCancelled: () => ctx.isCancelled() }, req, ctx.post),
        }
      : {}),
  });
  let id = 0;
  const send = async (req: Exclude<WorkerRequestBody, { type: 'cancel' }>) => {
    const rid = ++id;
    await core.handle({ ...req, id: rid } as WorkerRequest);
    return messages.filter((m) => 'id' in m && m.id === rid);
  };
  return { core, messages, send, devices, nextId: () => id + 1 };
}

const config = (params: Record<string, number> = {}): RunConfig => ({
  kernel: TOY_ID,
  arm: 'scalar',
  data: { source: 'reference', seed: 0 },
  params: { ...toyCatalog.defaults, ...params },
});
const TIMING = { targetMs: 2, batches: 2 };

function outcomeOf(msgs: readonly WorkerResponse[]): RunOutcome {
  const r = msgs.find((m) => m.type === 'run-result');
  if (r?.type !== 'run-result') throw new Error(`no run-result: ${JSON.stringify(msgs.at(-1))}`);
  return r.outcome;
}

const progress = (msgs: readonly WorkerResponse[]) => msgs.flatMap((m) => (m.type === 'progress' ? [m] : []));

/** The toy's pass text, without its host suffix, as the editor shows it. */
async function editable(h: ReturnType<typeof harness>, c = config()) {
  const g = (await h.send({ type: 'generate', config: c })).find((m) => m.type === 'generated');
  if (g?.type !== 'generated') throw new Error('no kernel');
  return g.kernel.passes[0]!;
}

describe('the worker core on a CPU adapter', () => {
  it('opens the device once, answering the request that opened it with the adapter', async () => {
    const h = harness();
    const [ready] = await h.send({ type: 'init' });
    expect(ready).toMatchObject({
      type: 'ready',
      id: 1,
      deviceId: 'cpu/twin/CPU twins (test)#plane32',
      plane: 32,
      caps: { vendor: 'cpu', timestampQuery: true },
    });
    // The next init is answered from the open device; a run opens nothing.
    expect(await h.send({ type: 'init' })).toEqual([{ ...ready!, id: 2 }]);
    await h.send({ type: 'run', config: config(), instrument: false });
    expect(h.devices).toHaveLength(1);
    expect(h.messages.filter((m) => m.type === 'ready')).toHaveLength(2);
  });

  it('generates the editable text apart from the host suffix', async () => {
    const h = harness();
    const msgs = await h.send({ type: 'generate', config: config() });
    expect(msgs.map((m) => m.type)).toEqual(['ready', 'generated']);
    const g = msgs[1]!;
    if (g.type !== 'generated') throw new Error();
    expect(g.kernel).toMatchObject({ mainPass: 0, phases: ['scalar-epilogue'], plane: 32, problems: [] });
    expect(g.kernel.passes).toHaveLength(1);
    const pass = g.kernel.passes[0]!;
    expect(pass).toMatchObject({
      label: 'toy 8x1',
      entryPoint: 'main',
      workgroupSize: 8,
      workgroups: [3, 8, 1],
    });
    expect(pass.wgsl).toContain('@compute @workgroup_size(8)');
    expect(pass.wgsl).not.toContain(HOST_SUFFIX_MARKER);
    expect(pass.suffix.startsWith(`\n${HOST_SUFFIX_MARKER}`)).toBe(true);
  });

  it("reports a config's problems instead of a kernel: the family's checks, then the plan's", async () => {
    const h = harness();
    const [, bad] = await h.send({ type: 'generate', config: config({ m: 0, wx: 1000 }) });
    expect(bad).toEqual({
      type: 'generated',
      id: 1,
      kernel: { passes: [], mainPass: 0, phases: [], plane: 32, problems: expect.any(Array) },
    });
    const problems = (bad as { kernel: { problems: string[] } }).kernel.problems;
    expect(problems).toEqual(['m = 0 must be at least 1', 'wx = 1000 must be at most 256']);
  });

  it('runs a config: its output against the oracle, its timing, its recorded and analytic ownership', async () => {
    const h = harness();
    const msgs = await h.send({ type: 'run', config: config(), timing: TIMING, instrument: true });
    const o = outcomeOf(msgs);
    const built = toyFamily.build({ ...config(), plane: 32 }, h.core.current()!.caps);
    expect(o.config).toEqual({ ...config(), plane: 32 });
    expect([o.rows, o.cols]).toEqual([8, 24]);
    expect(Array.from(o.output)).toEqual(Array.from(built.facts.oracle()));
    expect(Array.from(o.oracle)).toEqual(Array.from(built.facts.oracle()));
    expect(o.output).toBeInstanceOf(Int32Array);
    expect(o.verdict).toMatchObject({ pass: true, mismatches: 0 });
    expect(o).toMatchObject({
      edited: false,
      warnings: [],
      ops: 2 * 8 * 24 * 16,
      arithmetic: 'int8',
      traffic: [{ label: 'toy 8x1', readBytes: (8 * 16 + 24 * 16) * 4, writeBytes: 8 * 24 * 4 }],
    });
    expect(o.compileMs).toBeGreaterThanOrEqual(0);
    expect(o.runWallMs).toBeGreaterThanOrEqual(0);
    // The timing: 0.2 ms a run on the virtual clock, by timestamps.
    expect(o.timing!.method).toBe('timestamp');
    expect(o.timing!.ms).toBeCloseTo(0.2, 9);
    expect(o.timing!.samples).toHaveLength(2);
    expect(o.timing).not.toHaveProperty('passes');
    expect(o.throughput!.unit).toBe('int8 TOPS');
    expect(o.throughput!.value).toBeCloseTo((2 * 8 * 24 * 16) / 0.2e-3 / 1e12, 12);
    // The recorded ownership is the analytic one: every element stored once, by its workgroup and lane.
    const analytic = built.facts.analyticOwnership('scalar-epilogue');
    expect(Object.keys(o.analyticOwnership ?? {})).toEqual(['scalar-epilogue']);
    for (const own of [o.ownership!, o.analyticOwnership!['scalar-epilogue']!]) {
      expect([own.rows, own.cols]).toEqual([8, 24]);
      expect(Array.from(own.count)).toEqual(Array.from(analytic.count));
      expect(Array.from(own.workgroup)).toEqual(Array.from(analytic.workgroup));
      expect(Array.from(own.lane)).toEqual(Array.from(analytic.lane));
      expect(Array.from(own.plane)).toEqual(Array.from(analytic.plane));
    }
    expect(o).not.toHaveProperty('fullPrecision');
    expect(o).not.toHaveProperty('tensorRead');
  });

  it('says what each stage of a run waits on, its fraction never going back', async () => {
    const h = harness();
    const msgs = await h.send({ type: 'run', config: config(), timing: TIMING, instrument: true });
    const p = progress(msgs);
    expect(p.map((m) => m.stage)).toEqual([
      'preparing inputs',
      'compiling',
      'running',
      'timing',
      'timing: batch 1 of 2',
      'timing: batch 2 of 2',
      'checking against the oracle',
      'full-precision reference',
      'instrumented run (recording ownership)',
      'analytic ownership',
    ]);
    expect(p.map((m) => m.busy)).toEqual([
      'cpu',
      'gpu',
      'gpu',
      'gpu',
      'gpu',
      'gpu',
      'cpu',
      'cpu',
      'gpu',
      'cpu',
    ]);
    const fractions = [0.02, 0.05, 0.15, 0.2, 0.4, 0.6, 0.62, 0.7, 0.78, 0.92];
    p.forEach((m, i) => expect(m.fraction, m.stage).toBeCloseTo(fractions[i]!, 12));
    // The timing's batches are in flight: about the target, 2 ms.
    expect(p.filter((m) => m.stage.startsWith('timing')).map((m) => m.gpuMs)).toEqual([2, 2, 2]);
    expect(p[1]).not.toHaveProperty('gpuMs');
  });

  it('a run without timing or recording: neither is reported', async () => {
    const h = harness();
    const o = outcomeOf(await h.send({ type: 'run', config: config(), instrument: false }));
    expect(o).not.toHaveProperty('timing');
    expect(o).not.toHaveProperty('throughput');
    expect(o).not.toHaveProperty('ownership');
    expect(o.analyticOwnership).toHaveProperty('scalar-epilogue');
  });

  it("runs the user's edit in place of the kernel; an unchanged text is no edit", async () => {
    const h = harness();
    const pass = await editable(h);
    const same = outcomeOf(
      await h.send({ type: 'run', config: config(), wgsl: pass.wgsl, instrument: false }),
    );
    expect(same.edited).toBe(false);
    // The edit runs (with its recording variant): a comment changes nothing computed.
    const edit = `// my edit\n${pass.wgsl}`;
    const msgs = await h.send({ type: 'run', config: config(), wgsl: edit, instrument: true });
    const o = outcomeOf(msgs);
    expect(o.edited).toBe(true);
    expect(o.verdict.pass).toBe(true);
    expect(o.ownership).toBeDefined();
    const ran = [...h.devices[0]!.dispatches.keys()];
    expect(ran.some((code) => code.startsWith('// my edit\n') && code.includes('owner_dbg'))).toBe(true);
    expect(ran.some((code) => code === edit + pass.suffix)).toBe(true);
  });

  it("maps a compile error of the user's text onto its line, and one in the host suffix says so", async () => {
    // The adapter's compiler: an error at the line holding 'oops', or -- where the text lost its output
    // array -- at the suffix's store.
    const compile = (code: string) => {
      const lines = code.split('\n');
      const at = lines.findIndex(
        (l) => l.includes('oops') || (!code.includes('> out:') && l.includes('out[i]')),
      );
      return at < 0
        ? []
        : [
            {
              type: 'error',
              message: 'unresolved',
              lineNum: at + 1,
              linePos: 3,
              offset: 0,
              length: 4,
            } as GPUCompilationMessage,
          ];
    };
    const h = harness({ compile });
    const pass = await editable(h);
    const lines = pass.wgsl.split('\n');
    lines[5] = `${lines[5]!} oops`;
    const [err] = (
      await h.send({ type: 'run', config: config(), wgsl: lines.join('\n'), instrument: true })
    ).filter((m) => m.type !== 'progress');
    expect(err).toEqual({
      type: 'compile-error',
      id: 2,
      messages: [{ type: 'error', message: 'unresolved', lineNum: 6, linePos: 3, offset: 0, length: 4 }],
      code: lines.join('\n') + pass.suffix,
      editorLines: lines.length,
    });
    const renamed = pass.wgsl.replace('> out:', '> out2:');
    const [suffixErr] = (
      await h.send({ type: 'run', config: config(), wgsl: renamed, instrument: false })
    ).filter((m) => m.type !== 'progress');
    if (suffixErr?.type !== 'compile-error') throw new Error(JSON.stringify(suffixErr));
    const e = suffixErr.messages[0]!;
    expect(e.lineNum).toBeGreaterThan(suffixErr.editorLines);
    expect(e.message).toBe(
      `in host suffix (line ${e.lineNum - suffixErr.editorLines} after your code): unresolved -- the suffix defines set_owner/store_out and stores into the kernel's output array; keep those names and types`,
    );
  });

  it('the ownership is not recorded where the recording variant cannot run, and the run says why', async () => {
    // Three storage buffers a stage: the kernel's a, b, out fit, the recording variant's owner does not.
    const tight = harness({ limits: { maxStorageBuffersPerShaderStage: 3 } });
    const o = outcomeOf(await tight.send({ type: 'run', config: config(), instrument: true }));
    expect(o.verdict.pass).toBe(true);
    expect(o).not.toHaveProperty('ownership');
    expect(o.warnings).toEqual([
      {
        type: 'warning',
        message: expect.stringMatching(
          /^ownership not recorded: the recording variant needs more than this adapter allows \(.+\)$/,
        ),
        lineNum: 0,
        linePos: 0,
        offset: 0,
        length: 0,
      },
    ]);
    // A recording variant that does not compile: the kernel ran, the warning says what failed.
    const compile = (code: string) =>
      code.includes('owner_dbg')
        ? [
            {
              type: 'error',
              message: 'no atomics',
              lineNum: 1,
              linePos: 1,
              offset: 0,
              length: 1,
            } as GPUCompilationMessage,
          ]
        : [];
    const failing = outcomeOf(
      await harness({ compile }).send({ type: 'run', config: config(), instrument: true }),
    );
    expect(failing.verdict.pass).toBe(true);
    expect(failing).not.toHaveProperty('ownership');
    expect(failing.warnings.map((w) => w.message)).toEqual([
      expect.stringMatching(/^ownership recording failed: .*WGSL error at line 1:1: no atomics$/),
    ]);
  });

  it('times a plan of several passes whole and pass by pass', async () => {
    // The toy with a second pass after it (a no-op on the CPU) of 0.3 ms.
    const twoPass: KernelFamily = {
      ...toyFamily,
      build: (c, caps, weight) => {
        const b = toyFamily.build(c, caps, weight);
        const touch = {
          ...b.plan.passes[0]!,
          label: 'touch',
          wgsl: '@compute @workgroup_size(1) fn touch() {}',
          entryPoint: 'touch',
          bindings: ['out'],
          workgroups: [1, 1, 1] as const,
        };
        const plan: KernelPlan = { ...b.plan, passes: [...b.plan.passes, touch] };
        return { ...b, plan };
      },
    };
    const h = harness({
      kernels: createRegistry([twoPass]),
      kernel: (code) => (code.includes('fn touch') ? () => {} : toyTwin()(code)),
      dispatchNs: (code) => (code.includes('fn touch') ? 3e5 : toyNs(code)),
    });
    const msgs = await h.send({ type: 'run', config: config(), timing: TIMING, instrument: false });
    const t = outcomeOf(msgs).timing!;
    expect(t.ms).toBeCloseTo(0.5, 9);
    expect(t.passes!.map((p) => p.label)).toEqual(['toy 8x1', 'touch']);
    expect(t.passes![0]!.ms).toBeCloseTo(0.2, 9);
    expect(t.passes![1]!.ms).toBeCloseTo(0.3, 9);
    // Two batches a pass (whether a batch is coarse depends on the runs a batch holds, which the probe's
    // wall time sizes: under load or Stryker's instrumentation one run a batch, and coarse).
    expect(t.passes!.every((p) => p.samples.length === 2)).toBe(true);
    // Its throughput is the whole plan's.
    expect(outcomeOf(msgs).throughput!.value).toBeCloseTo((2 * 8 * 24 * 16) / 0.5e-3 / 1e12, 12);
    expect(
      progress(msgs)
        .filter((m) => m.stage.startsWith('timing'))
        .map((m) => m.stage),
    ).toEqual([
      'timing',
      'timing the whole plan: batch 1 of 2',
      'timing the whole plan: batch 2 of 2',
      'timing pass 1 of 2: batch 1 of 2',
      'timing pass 1 of 2: batch 2 of 2',
      'timing pass 2 of 2: batch 1 of 2',
      'timing pass 2 of 2: batch 2 of 2',
    ]);
    // Each of the three timings a third of the 0.2..0.6 the timing takes.
    const batches = progress(msgs).filter((m) => m.stage.includes('batch'));
    const want = [0.5, 1, 1.5, 2, 2.5, 3].map((step) => 0.2 + (0.4 * step) / 3);
    batches.forEach((m, i) => expect(m.fraction, m.stage).toBeCloseTo(want[i]!, 12));
  });
});

describe('cancel, loss and errors', () => {
  it('cancels a run at its next stage boundary', async () => {
    const h = harness();
    await h.send({ type: 'init' });
    const id = h.nextId();
    const pending = h.send({ type: 'run', config: config(), timing: TIMING, instrument: true });
    await h.core.handle({ type: 'cancel', id });
    expect((await pending).at(-1)).toEqual({ type: 'cancelled', id });
    // A cancel of a request that is not pending is ignored: the next run with that id is not cancelled.
    await h.core.handle({ type: 'cancel', id: 99 });
    expect(outcomeOf(await h.send({ type: 'run', config: config(), instrument: false })).verdict.pass).toBe(
      true,
    );
  });

  it('cancels a run in flight after its first stage', async () => {
    const seen: WorkerResponse[] = [];
    const { gpu } = cpuGpu({ kernel: toyTwin(), dispatchNs: toyNs });
    const core = createGpuCore({
      gpu,
      kernels: TOY_KERNELS,
      post: (msg) => {
        seen.push(msg);
        if (msg.type === 'progress' && msg.id === 2) void core.handle({ type: 'cancel', id: 2 });
      },
    });
    await core.handle({ type: 'init', id: 1 });
    await core.handle({ type: 'run', id: 2, config: config(), timing: TIMING, instrument: true });
    expect(seen.filter((m) => 'id' in m && m.id === 2).map((m) => m.type)).toEqual(['progress', 'cancelled']);
  });

  it('reports a lost device and opens another on the next request', async () => {
    const h = harness();
    await h.send({ type: 'init' });
    await h.send({ type: 'lose-device' });
    await new Promise((r) => setTimeout(r, 0));
    expect(h.messages.filter((m) => m.type === 'device-lost')).toEqual([
      { type: 'device-lost', reason: 'destroyed', message: 'the device was destroyed' },
    ]);
    expect(h.core.current()).toBeUndefined();
    const msgs = await h.send({ type: 'run', config: config(), instrument: false });
    expect(msgs[0]).toMatchObject({ type: 'ready' });
    expect(outcomeOf(msgs).verdict.pass).toBe(true);
    expect(h.devices).toHaveLength(2);
    // Losing a device when none is open says so.
    const idle = harness();
    await idle.send({ type: 'lose-device' });
    expect(idle.messages).toEqual([
      { type: 'device-lost', reason: 'destroyed', message: 'no device was open' },
    ]);
  });

  it('answers an unknown family, a missing WebGPU and a missing tuner with clear errors', async () => {
    const h = harness();
    const [, r] = await h.send({ type: 'generate', config: { ...config(), kernel: 'nope' } });
    expect(r).toEqual({
      type: 'error',
      id: 1,
      kind: 'shape',
      message: `unknown kernel family 'nope' (${TOY_ID})`,
    });
    const bare = harness({ noGpu: true });
    const [u] = await bare.send({ type: 'init' });
    expect(u).toEqual({
      type: 'error',
      id: 1,
      kind: 'unsupported',
      message: 'WebGPU is not available here (navigator.gpu is missing)',
    });
    const [t] = await harness().send({ type: 'autokernel', base: config() });
    expect(t).toEqual({ type: 'error', id: 1, kind: 'unsupported', message: 'this worker has no tuner' });
  });

  it('a file that is not GGUF is a file error', async () => {
    const [r] = await harness().send({
      type: 'open-gguf',
      file: new Blob([new Uint8Array(64)]),
      name: 'x.gguf',
    });
    expect(r).toMatchObject({ type: 'error', kind: 'file' });
  });

  it('a shape error of the run is a shape error; a failing dispatch a validation error', async () => {
    const shape = await harness().send({ type: 'run', config: config({ m: 0 }), instrument: false });
    expect(shape.at(-1)).toEqual({
      type: 'error',
      id: 1,
      kind: 'shape',
      message: 'm = 0 must be at least 1',
    });
    const broken = harness({
      kernel: () => () => {
        throw new Error('lost');
      },
    });
    const v = await broken.send({ type: 'run', config: config(), instrument: false });
    expect(v.at(-1)).toMatchObject({ type: 'error', kind: 'validation', message: 'toy 8x1: lost' });
  });

  it('serves a hunt through the tuner it was given, on its device', async () => {
    const h = harness({ tune: true });
    const msgs = await h.send({
      type: 'tune',
      base: config(),
      evo: { population: 2, generations: 1, seed: 1, measureMs: 1, batches: 1, banks: 1 },
    });
    expect(msgs[0]).toMatchObject({ type: 'ready' });
    expect(msgs.at(-1)).toMatchObject({
      type: 'tune-done',
      report: { deviceId: 'cpu/twin/CPU twins (test)#plane32', kernel: TOY_ID },
    });
  });
});

describe('compile messages past the editor', () => {
  it('counts editor lines and notes only messages past them', () => {
    expect([lineCount(''), lineCount('a'), lineCount('a\nb\nc'), lineCount('a\n')]).toEqual([1, 1, 3, 2]);
    const m = { type: 'error' as const, message: 'x', lineNum: 4, linePos: 1, offset: 0, length: 1 };
    expect(noteSuffixMessages([m, { ...m, lineNum: 3 }], 3).map((x) => x.message)).toEqual([
      "in host suffix (line 1 after your code): x -- the suffix defines set_owner/store_out and stores into the kernel's output array; keep those names and types",
      'x',
    ]);
  });
});
