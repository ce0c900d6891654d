// Adding a family: the toy family (test/toyFamily.ts) is defined outside src/kernels and put in a
// registry of its own, then driven through the worker core (generate, run, recorded ownership), the
// tuner (a 'tune' request through the core's tune handler) and `mmq run` -- none of which names it. Its
// skeleton (src/kernels/define.ts) is checked first without a GPU: validation once, data once per
// problem, the plan against the adapter's limits, the memoized oracle, the phase guard.
import { describe, expect, it } from 'vitest';
import { main } from '../cli/mmq';
import { runCommand } from '../cli/run';
import { defineFamily, familyBuilder } from '../src/kernels/define';
import { ShapeError, type ResolvedConfig, type RunConfig } from '../src/kernels/family';
import { fakeCaps } from '../src/kernels/gpu/testCaps';
import { createGpuCore } from '../src/workers/core';
import type { RunOutcome, WorkerRequest, WorkerRequestBody, WorkerResponse } from '../src/workers/protocol';
import { handleTuneRequest } from '../src/workers/tune';
import { getDawnGpu } from './gpu';
import { TOY_ID, TOY_KERNELS, toyCatalog, toyFamily, toyParts } from './toyFamily';

const config = (params: Record<string, number> = {}, over: Partial<RunConfig> = {}): ResolvedConfig => ({
  kernel: TOY_ID,
  arm: 'scalar',
  plane: 4,
  data: { source: 'reference', seed: 0 },
  params: { ...toyCatalog.defaults, ...params },
  ...over,
});
const caps = fakeCaps();

describe('the family skeleton, on the toy family (no GPU)', () => {
  it('validates once: every problem of the config in one ShapeError, before anything is generated', () => {
    const bad = config({ m: 0 }, { arm: 'dp4a', data: { source: 'reference', seed: -1 } });
    expect(() => toyFamily.build(bad, caps)).toThrow(ShapeError);
    expect(() => toyFamily.build(bad, caps)).toThrow(
      /m = 0 must be at least 1; toy-gemm has no dp4a arm .*; data seed -1 must be a whole number/,
    );
  });

  it('makes the data once per problem, whatever the schedule, and only when something needs it', () => {
    let made = 0;
    const counted = defineFamily({
      catalog: toyCatalog,
      builder: familyBuilder(TOY_ID, { ...toyParts, data: (s, c) => (made++, toyParts.data(s, c)) }),
      search: toyFamily.search!,
    });
    const one = counted.build(config({ wx: 4 }), caps);
    const two = counted.build(config({ wx: 16, cols: 2 }), caps);
    expect(made).toBe(0); // plans hold their data lazily: a built problem costs no data until it runs
    expect(two.facts.oracle()).toEqual(one.facts.oracle());
    expect(made).toBe(1);
    counted.build(config({ m: 9 }), caps).facts.oracle();
    expect(made).toBe(2); // another shape: another dataset
  });

  it('memoizes the oracle, takes sampled rows from it, and refuses a phase the kernel has not', () => {
    const { facts } = toyFamily.build(config(), caps);
    expect(facts.oracle()).toBe(facts.oracle());
    expect([...facts.oracle([2])]).toEqual([...facts.oracle().subarray(2 * 24, 3 * 24)]);
    expect(facts.analyticOwnership('scalar-epilogue')).toBe(facts.analyticOwnership('scalar-epilogue'));
    expect(() => facts.analyticOwnership('fragment-store')).toThrow(
      /'fragment-store' does not occur in toy-gemm \(scalar arm\): it stores its output in scalar-epilogue/,
    );
  });

  it("checks the plan against the adapter's limits", () => {
    const small = fakeCaps({
      limits: { maxComputeInvocationsPerWorkgroup: 64, maxComputeWorkgroupSizeX: 64 },
    });
    expect(() => toyFamily.build(config({ wx: 128 }), small)).toThrow(
      /128 invocations per workgroup > this adapter's 64/,
    );
  });
});

describe('the toy family through the worker core, the tuner and mmq run (Dawn on SwiftShader)', () => {
  const messages: WorkerResponse[] = [];
  const core = createGpuCore({
    gpu: getDawnGpu(),
    kernels: TOY_KERNELS,
    post: (m) => messages.push(m),
    tune: (req, ctx) => handleTuneRequest({ ...ctx, isCancelled: () => ctx.isCancelled() }, req, ctx.post),
  });
  let id = 0;
  const send = async (req: Exclude<WorkerRequestBody, { type: 'cancel' }>) => {
    const rid = ++id;
    await core.handle({ ...req, id: rid } as WorkerRequest);
    return messages.filter((m) => 'id' in m && m.id === rid && m.type !== 'progress');
  };

  it('generates and runs it: the oracle matches, the recorded ownership is the analytic one, timed', async () => {
    const run = config({ m: 5, n: 20, k: 8, wx: 4, cols: 2 });
    const generated = (await send({ type: 'generate', config: run })).find((m) => m.type === 'generated');
    expect(generated?.type === 'generated' && generated.kernel.passes[0]!.wgsl).toContain(
      '@workgroup_size(4)',
    );
    const [result] = await send({
      type: 'run',
      config: run,
      instrument: true,
      timing: { targetMs: 1, batches: 1 },
    });
    if (result?.type !== 'run-result') throw new Error(JSON.stringify(result));
    const o: RunOutcome = result.outcome;
    expect(o.verdict.pass).toBe(true);
    expect([o.rows, o.cols]).toEqual([5, 20]);
    expect([...o.ownership!.count]).toEqual(new Array(100).fill(1));
    const analytic = o.analyticOwnership?.['scalar-epilogue'];
    if (!analytic) throw new Error('no analytic ownership');
    expect([...o.ownership!.workgroup]).toEqual([...analytic.workgroup]);
    expect([...o.ownership!.lane]).toEqual([...analytic.lane]);
    expect(o.throughput?.unit).toBe('int8 TOPS');
  });

  it("tunes it: the hunt measures its search's configs and holds the winner to the family's gate", async () => {
    const evo = { population: 3, generations: 2, seed: 1, measureMs: 1, batches: 1, banks: 1 };
    const msgs = await send({ type: 'tune', base: config({ m: 6, n: 40, k: 8 }), evo });
    const done = msgs.at(-1);
    if (done?.type !== 'tune-done') throw new Error(JSON.stringify(done));
    expect(done.report).toMatchObject({ op: 'toy_gemm', kernel: TOY_ID, problem: 'm=6,n=40,k=8' });
    expect(done.report.winnerVerdict).toMatchObject({ pass: true, gate: 'bit-exact' });
    expect(done.report.entries.map((e) => e.config)).toContain('WX=8,COLS=1');
    // The tuner's charts place each config by the block the family declares (no wm/wn/rm/rn here).
    for (const e of done.report.entries)
      expect([e.bm, e.bn]).toEqual([1, Number(e.params.wx) * Number(e.params.cols)]);
    expect(done.report.winnerConfig?.params).toMatchObject({ m: 6, n: 40, k: 8 });
  });

  it('runs it from mmq run, its declared tile knobs through --tile', async () => {
    let out = '';
    let err = '';
    const io = { stdout: (t: string) => void (out += t), stderr: (t: string) => void (err += t) };
    const args = ['--kernel', TOY_ID, '--m', '3', '--n', '10', '--k', '4', '--tile', '4,4', '--batches', '1'];
    const code = await main(['run', ...args, '--target-ms', '1'], io, [runCommand(TOY_KERNELS)]);
    expect(err).not.toMatch(/mmq: /);
    expect(code).toBe(0);
    expect(out).toMatch(/^toy-gemm \(scalar arm\) m=3 n=10 k=4 wx=4 cols=4 on reference data seed 0/);
    expect(out).toMatch(/verdict: matches oracle \(bit-exact/);
    expect(await main(['run', '--kernel', 'mmq-q4k-rt'], io, [runCommand(TOY_KERNELS)])).toBe(2);
    expect(err).toMatch(/mmq: run: unknown kernel family 'mmq-q4k-rt' \(toy-gemm\)/);
  });
});
