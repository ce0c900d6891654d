// The worker's 'tune' / 'autokernel' handler on a CPU device (test/cpuDevice.ts): the toy family's kernel
// runs as its JavaScript twin and each config costs what the test says on a virtual GPU clock, so which
// config wins, what the claim finds and where a cancel lands are exact. test/tune.handler.test.ts runs the
// handler on Dawn; this file pins its decisions.
import { describe, expect, it } from 'vitest';
import type { KernelFamily, RunConfig } from '../src/kernels/family';
import { SWIFTSHADER_CAPS } from '../src/kernels/gpu/testCaps';
import { createRegistry, type Registry } from '../src/kernels/registry';
import type {
  EvolutionParams,
  TuneRecordEntry,
  TuneReport,
  WorkerRequest,
  WorkerResponse,
} from '../src/workers/protocol';
import { handleTuneRequest } from '../src/workers/tune';
import { cpuDevice, type CpuKernel } from './cpuDevice';
import { TOY_ID, TOY_KERNELS, toyCatalog, toyFamily } from './toyFamily';

/** A toy config's schedule, read off its WGSL. */
const scheduleOf = (code: string) => ({
  wx: Number(/@workgroup_size\((\d+)\)/.exec(code)?.[1]),
  cols: Number(/j < (\d+)u/.exec(code)?.[1]),
});
const name = (wx: number, cols: number) => `WX=${wx},COLS=${cols}`;

/**
 * The toy kernel's twin: out = A @ B^T (m, n, k from the buffers' sizes), the first `wrong.get(config)`
 * elements of a config one too large.
 */
const twinOf =
  (wrong: ReadonlyMap<string, number> = new Map()): ((code: string) => CpuKernel) =>
  (code) =>
  (b) => {
    const a = new Int32Array(b.get(0)!);
    const w = new Int32Array(b.get(1)!);
    const out = new Int32Array(b.get(2)!);
    const n = Math.round(Math.sqrt((out.length * w.length) / a.length));
    const k = w.length / n;
    const m = a.length / k;
    const { wx, cols } = scheduleOf(code);
    const off = wrong.get(name(wx, cols)) ?? 0;
    for (let r = 0; r < m; r++)
      for (let c = 0; c < n; c++) {
        let acc = r * n + c < off ? 1 : 0;
        for (let l = 0; l < k; l++) acc += a[r * k + l]! * w[c * k + l]!;
        out[r * n + c] = acc;
      }
  };

/** The toy's 12 configs, fastest first: the incumbent (8x1) is 7th, the seed (4x2) 8th. */
const RANKED = [
  [16, 2],
  [32, 2],
  [16, 1],
  [8, 2],
  [16, 4],
  [32, 1],
  [8, 1],
  [4, 2],
  [32, 4],
  [8, 4],
  [4, 1],
  [4, 4],
].map(([wx, cols]) => name(wx!, cols!));

/** GPU ns per run: 1000 times a config's place in RANKED (1-based). */
const toyCost = (wx: number, cols: number) => 1000 * (1 + RANKED.indexOf(name(wx, cols)));

const base = (params: Record<string, number> = {}): RunConfig => ({
  kernel: TOY_ID,
  arm: 'scalar',
  data: { source: 'reference', seed: 0 },
  params: { ...toyCatalog.defaults, ...params },
});

/** Every one of the toy's 12 configs in generation 0, no later generation. */
const ALL: EvolutionParams = { population: 12, generations: 1, seed: 7, measureMs: 1, batches: 2, banks: 1 };
/** Two configs: a hunt that only has to start. */
const SMALL: EvolutionParams = { ...ALL, population: 2 };

interface HuntOptions {
  cost?: (wx: number, cols: number) => number;
  /** Configs whose first elements are off by one, and how many. */
  wrong?: ReadonlyMap<string, number>;
  kernels?: Registry<KernelFamily>;
  /** Cancelled once this many entries were posted. */
  cancelAfter?: number;
  /** Called with each message as it is posted. */
  onPost?: (m: WorkerResponse) => void;
  deviceId?: string;
}

async function serve(req: Extract<WorkerRequest, { type: 'tune' | 'autokernel' }>, o: HuntOptions = {}) {
  const cost = o.cost ?? toyCost;
  const { device, log } = cpuDevice({
    kernel: twinOf(o.wrong),
    dispatchNs: (code) => {
      const { wx, cols } = scheduleOf(code);
      return cost(wx, cols);
    },
  });
  const msgs: WorkerResponse[] = [];
  let entries = 0;
  await handleTuneRequest(
    {
      device,
      caps: SWIFTSHADER_CAPS,
      kernels: o.kernels ?? TOY_KERNELS,
      ...(o.deviceId ? { deviceId: o.deviceId } : {}),
      isCancelled: (id) => id === req.id && entries >= (o.cancelAfter ?? Infinity),
    },
    req,
    (m) => {
      msgs.push(m);
      if (m.type === 'tune-progress' && m.entry) entries++;
      o.onPost?.(m);
    },
  );
  /** How often a config's kernel was dispatched. */
  const dispatched = (wx: number, cols: number) =>
    [...log.dispatches]
      .filter(([code]) => name(scheduleOf(code).wx, scheduleOf(code).cols) === name(wx, cols))
      .reduce((a, [, n]) => a + n, 0);
  return { msgs, log, dispatched };
}

const tune = (
  o: HuntOptions & { evo?: EvolutionParams; id?: number; params?: Record<string, number> } = {},
) => serve({ type: 'tune', id: o.id ?? 1, base: base(o.params), evo: o.evo ?? ALL }, o);

function reportOf(msgs: readonly WorkerResponse[]): TuneReport {
  const done = msgs.at(-1);
  if (done?.type !== 'tune-done') throw new Error(`no report: ${JSON.stringify(done)}`);
  return done.report;
}

const stages = (msgs: readonly WorkerResponse[]) =>
  msgs.flatMap((m) => (m.type === 'tune-progress' && !m.entry ? [m.stage] : []));

describe('a hunt on the CPU device', () => {
  it('reports every config, the fastest verified one as winner, and the claim over the incumbent', async () => {
    const { msgs, log } = await tune();
    const report = reportOf(msgs);
    expect(msgs.at(-1)).toMatchObject({ type: 'tune-done', id: 1, fromCache: false });
    expect(report).toMatchObject({
      op: 'toy_gemm',
      kernel: TOY_ID,
      deviceId: 'google/swiftshader/SwiftShader#plane4',
      problem: 'm=8,n=24,k=16',
      base: base(),
      winner: name(16, 2),
      winnerConfig: base({ wx: 16, cols: 2 }),
      status: 'complete',
      worstRel: 0,
      timing: 'timestamp',
      ops: 2 * 8 * 24 * 16,
      evo: ALL,
      winnerVerdict: { pass: true, gate: 'bit-exact', relToMax: 0, mismatches: 0 },
    });
    expect(report).not.toHaveProperty('gatedRows');
    expect(report.bestMs).toBeCloseTo(0.001, 9);
    expect(report.incumbentMs).toBeCloseTo(0.007, 9);
    expect(report.entries).toHaveLength(12);
    expect(report.bestPerGeneration).toHaveLength(1);
    expect(report.bestPerGeneration[0]).toBeCloseTo(0.001, 9);
    expect(Date.parse(report.startedAt)).toBeGreaterThan(Date.parse('2020-01-01'));
    expect(report.durationMs).toBeGreaterThan(0);
    // The claim: incumbent (a) and winner (b), three rounds each; b is 7x faster.
    expect(report.claim?.verdict).toBe('faster');
    expect(report.claim!.ratio).toBeCloseTo(7, 6);
    expect(report.claim!.rounds.incumbentMs.map((ms) => ms.toFixed(6))).toEqual([
      '0.007000',
      '0.007000',
      '0.007000',
    ]);
    expect(report.claim!.rounds.winnerMs.map((ms) => ms.toFixed(6))).toEqual([
      '0.001000',
      '0.001000',
      '0.001000',
    ]);
    // The finalists: the search's three fastest, then the seeds (the incumbent first) not among them.
    expect(report.finals!.map((f) => f.config)).toEqual([
      name(16, 2),
      name(32, 2),
      name(16, 1),
      name(8, 1),
      name(4, 2),
    ]);
    expect(stages(msgs)).toEqual([
      'checking the winner on its whole output',
      're-timing incumbent and winner interleaved',
    ]);
    // Progress: one message per config as it is measured, then the stages, then the report.
    const progress = msgs.filter((m) => m.type === 'tune-progress' && m.entry);
    expect(progress).toHaveLength(12);
    expect(progress[0]).toMatchObject({ type: 'tune-progress', id: 1, generation: 0, evaluated: 1 });
    expect(msgs.at(-2)).toMatchObject({ generation: 0, evaluated: 12, bestMs: report.bestMs });
    // Everything the hunt allocated is freed.
    expect(log.liveBuffers()).toBe(0);
  });

  it("each entry: the config's params, label, block, figures and bytes moved", async () => {
    const report = reportOf((await tune()).msgs);
    const entry = report.entries.find((e) => e.config === name(16, 2))!;
    expect(entry).toMatchObject({
      config: name(16, 2),
      label: 'wx=16,cols=2,arm=scalar',
      params: base({ wx: 16, cols: 2 }).params,
      arm: 'scalar',
      generation: 0,
      verdict: 'measured',
      worstRel: 0,
      bm: 1,
      bn: 32,
      // a (8 x 16) and b (24 x 16) read, out (8 x 24) written, 4 bytes each.
      bytes: (8 * 16 + 24 * 16 + 8 * 24) * 4,
    });
    expect(entry.ms).toBeCloseTo(0.001, 9);
    expect(entry.samples).toHaveLength(2);
    expect(Object.keys(entry.phases!)).toEqual(['compileMs', 'verifyMs', 'benchmarkMs']);
    expect(Date.parse(entry.at!)).toBeGreaterThan(0);
    expect(entry).not.toHaveProperty('reason');
  });

  it('a config that fails the gate is entered with its reason, and never wins', async () => {
    const report = reportOf((await tune({ wrong: new Map([[name(16, 2), 5]]) })).msgs);
    const bad = report.entries.find((e) => e.config === name(16, 2))!;
    expect(bad).toMatchObject({ verdict: 'failed-gate', ms: Infinity });
    expect(bad.worstRel).toBeGreaterThan(0);
    expect(bad.reason).toBe(`rel_to_max ${bad.worstRel!.toExponential(2)} > bit-exact gate (5 elements off)`);
    expect(bad).not.toHaveProperty('bytes');
    expect(bad).not.toHaveProperty('samples');
    expect(report.winner).toBe(name(32, 2));
    expect(report.worstRel).toBe(bad.worstRel);
  });

  it('the incumbent as winner: no claim, its own figure on both sides', async () => {
    const report = reportOf((await tune({ cost: (wx, cols) => (wx === 8 && cols === 1 ? 500 : 2000) })).msgs);
    expect(report.winner).toBe(name(8, 1));
    expect(report.claim).toBeUndefined();
    expect(report.bestMs).toBeCloseTo(0.0005, 9);
    expect(report.incumbentMs).toBe(report.bestMs);
  });
});

describe('the winner held to the whole-output gate', () => {
  // The search's gate lets every config through (rel_to_max below 1); the family's own gate is bit-exact.
  const lenient: KernelFamily = {
    ...toyFamily,
    search: (config, caps) => ({ ...toyFamily.search!(config, caps), gate: { kind: 'rel-to-max', tol: 1 } }),
  };
  const kernels = createRegistry([lenient]);

  it('a finalist that fails it gives way to the next fastest that passes, in order', async () => {
    const wrong = new Map([
      [name(16, 2), 1],
      [name(32, 2), 2],
    ]);
    const report = reportOf((await tune({ kernels, wrong })).msgs);
    expect(report.entries.every((e) => e.verdict === 'measured')).toBe(true);
    expect(report.winner).toBe(name(16, 1));
    expect(report.winnerVerdict).toEqual({ pass: true, gate: 'bit-exact', relToMax: 0, mismatches: 0 });
    expect(report.claim?.verdict).toBe('faster');
  });

  it('no more than four candidates are checked; when none passes there is no winner', async () => {
    // Each config off in as many elements as its place: the verdict shown is the last one checked.
    const everyone = new Map(RANKED.map((c, i) => [c, i + 1]));
    const report = reportOf((await tune({ kernels, wrong: everyone })).msgs);
    expect(report.winner).toBe('');
    expect(report).not.toHaveProperty('winnerConfig');
    expect(report.bestMs).toBe(Infinity);
    expect(report.claim).toBeUndefined();
    // Checked: the finalists by their re-timing, 16x2, 32x2, 16x1 and then 8x1 (the 7th fastest), not the
    // fifth finalist 4x2.
    expect(report.winnerVerdict).toMatchObject({ pass: false, gate: 'bit-exact', mismatches: 7 });
    // The incumbent's own figure stands without a winner to compare with.
    expect(report.incumbentMs).toBeCloseTo(0.007, 9);
  });
});

describe('the claim decides between incumbent and winner', () => {
  it('a winner that is not measurably faster when re-timed leaves the incumbent', async () => {
    let claiming = false;
    const report = reportOf(
      (
        await tune({
          // In the claim the winner runs as slowly as the incumbent.
          cost: (wx, cols) => (claiming && wx === 16 && cols === 2 ? 7000 : toyCost(wx, cols)),
          onPost: (m) => {
            if (m.type === 'tune-progress' && /re-timing/.test(m.stage ?? '')) claiming = true;
          },
        })
      ).msgs,
    );
    expect(report.claim?.verdict).toBe('no measurable difference');
    expect(report.winner).toBe(name(8, 1));
    expect(report.winnerConfig).toEqual(base({ wx: 8, cols: 1 }));
    expect(report.bestMs).toBeCloseTo(0.007, 9);
    expect(report.incumbentMs).toBeCloseTo(0.007, 9);
    // The incumbent was held to the whole-output gate before it stays.
    expect(report.winnerVerdict).toEqual({ pass: true, gate: 'bit-exact', relToMax: 0, mismatches: 0 });
  });
});

describe('the cached run', () => {
  const fresh = async () => reportOf((await tune()).msgs);

  it('a complete run of this device, op and problem is served as it is, without measuring', async () => {
    const cached = await fresh();
    const { msgs, log } = await serve({ type: 'tune', id: 2, base: base(), evo: ALL, cached });
    expect(msgs).toEqual([{ type: 'tune-done', id: 2, report: cached, fromCache: true }]);
    expect(log.dispatches.size).toBe(0);
  });

  it('is hunted again when it is not the same problem, device or op, not complete, or has no winner', async () => {
    const cached = await fresh();
    for (const stale of [
      { ...cached, problem: 'm=8,n=24,k=32' },
      { ...cached, deviceId: 'another' },
      { ...cached, op: 'other_op' },
      { ...cached, status: 'interrupted' as const },
      { ...cached, winner: '' },
    ]) {
      const { msgs } = await serve({ type: 'tune', id: 3, base: base(), evo: SMALL, cached: stale });
      expect(msgs.at(-1), JSON.stringify(stale).slice(0, 80)).toMatchObject({ fromCache: false });
    }
  });

  it("is hunted again when its winner is not a config of today's space", async () => {
    const cached = { ...(await fresh()), winner: 'WX=5,COLS=1' };
    const { msgs } = await serve({ type: 'tune', id: 3, base: base(), evo: SMALL, cached });
    expect(msgs.at(-1)).toMatchObject({ fromCache: false });
  });

  it('the device id the core gives is the one runs are stored under', async () => {
    const { msgs } = await tune({ deviceId: 'core-id' });
    expect(reportOf(msgs).deviceId).toBe('core-id');
  });
});

describe('a resumed hunt', () => {
  const entry = (wx: number, cols: number, e: Partial<TuneRecordEntry>): TuneRecordEntry => ({
    config: name(wx, cols),
    params: base({ wx, cols }).params,
    arm: 'scalar',
    generation: 0,
    verdict: 'measured',
    ms: 0.5,
    ...e,
  });

  it('replays what it measured before, measures the rest, and measures a rejected config again', async () => {
    const resume = [
      entry(4, 1, { ms: 0.0005 }),
      entry(4, 4, { verdict: 'failed-gate', ms: Infinity }),
      entry(32, 4, { verdict: 'failed-gate', ms: Infinity, reason: 'was wrong' }),
      entry(8, 4, { verdict: 'rejected', ms: Infinity, reason: 'too big' }),
    ];
    const { msgs, dispatched } = await serve({ type: 'tune', id: 4, base: base(), evo: ALL, resume });
    const report = reportOf(msgs);
    const byName = new Map(report.entries.map((e) => [e.config, e]));
    // The replayed measurement is not taken again: its figure is the stored one.
    expect(byName.get(name(4, 1))).toMatchObject({ verdict: 'measured', ms: 0.0005, worstRel: 0 });
    expect(byName.get(name(4, 4))).toMatchObject({
      verdict: 'failed-gate',
      reason: 'failed the correctness gate',
    });
    expect(byName.get(name(32, 4))).toMatchObject({ verdict: 'failed-gate', reason: 'was wrong' });
    // A rejection is not replayed (the adapter or the build may take it now): it is measured.
    expect(byName.get(name(8, 4))).toMatchObject({ verdict: 'measured' });
    expect(dispatched(4, 4)).toBe(0);
    expect(dispatched(32, 4)).toBe(0);
    expect(dispatched(8, 4)).toBeGreaterThan(0);
    // The replayed 4x1 is the search's fastest: as a finalist it is re-timed for real (and loses).
    expect(dispatched(4, 1)).toBeGreaterThan(0);
    expect(report.winner).toBe(name(16, 2));
  });
});

describe('cancel and errors', () => {
  it('a cancel between configs ends the hunt with a cancelled reply', async () => {
    const { msgs } = await tune({ cancelAfter: 3 });
    expect(msgs.at(-1)).toEqual({ type: 'cancelled', id: 1 });
    expect(msgs.filter((m) => m.type === 'tune-progress' && m.entry)).toHaveLength(3);
  });

  it('a cancel during the whole-output check or the claim still ends it as cancelled', async () => {
    for (const stage of [/checking the winner/, /re-timing/]) {
      let cancel = false;
      const { device } = cpuDevice({
        kernel: twinOf(),
        dispatchNs: (code) => toyCost(scheduleOf(code).wx, scheduleOf(code).cols),
      });
      const msgs: WorkerResponse[] = [];
      await handleTuneRequest(
        { device, caps: SWIFTSHADER_CAPS, kernels: TOY_KERNELS, isCancelled: () => cancel },
        { type: 'tune', id: 5, base: base(), evo: ALL },
        (m) => {
          msgs.push(m);
          if (m.type === 'tune-progress' && stage.test(m.stage ?? '')) cancel = true;
        },
      );
      expect(msgs.at(-1), String(stage)).toEqual({ type: 'cancelled', id: 5 });
    }
  });

  it('an error after the cancel was asked is reported as the cancel, not as the error', async () => {
    let cancel = false;
    const broken: KernelFamily = {
      ...toyFamily,
      build: (config, caps, weight) => {
        // The hunt's end: the incumbent's whole-output check fails to build once the user cancelled.
        if (cancel) throw new Error('the device went away');
        return toyFamily.build(config, caps, weight);
      },
    };
    const { device } = cpuDevice({ kernel: twinOf() });
    const msgs: WorkerResponse[] = [];
    await handleTuneRequest(
      { device, caps: SWIFTSHADER_CAPS, kernels: createRegistry([broken]), isCancelled: () => cancel },
      { type: 'tune', id: 6, base: base(), evo: ALL },
      (m) => {
        msgs.push(m);
        if (m.type === 'tune-progress' && /checking the winner/.test(m.stage ?? '')) cancel = true;
      },
    );
    expect(msgs.at(-1)).toEqual({ type: 'cancelled', id: 6 });
  });

  it('errors carry their kind: a family without tuning is a shape error, a bug is internal', async () => {
    const untuned: KernelFamily = { ...toyFamily, tuning: undefined } as unknown as KernelFamily;
    const { msgs } = await serve(
      { type: 'tune', id: 7, base: base(), evo: ALL },
      {
        kernels: createRegistry([untuned]),
      },
    );
    expect(msgs).toEqual([
      { type: 'error', id: 7, kind: 'shape', message: `${toyCatalog.title} has no tuning` },
    ]);
    const bug: KernelFamily = {
      ...toyFamily,
      search: () => {
        throw new TypeError('a bug');
      },
    };
    const internal = await serve(
      { type: 'tune', id: 8, base: base(), evo: ALL },
      {
        kernels: createRegistry([bug]),
      },
    );
    expect(internal.msgs).toEqual([{ type: 'error', id: 8, kind: 'internal', message: 'a bug' }]);
    const shape = await serve({ type: 'tune', id: 9, base: base({ m: 0 }), evo: ALL });
    expect(shape.msgs.at(-1)).toMatchObject({ type: 'error', id: 9, kind: 'shape' });
  });
});

describe('autokernel', () => {
  it('serves the cached winner: verified, measured once, resolved for this adapter', async () => {
    const { msgs } = await serve({ type: 'autokernel', id: 11, base: base(), cachedWinner: name(16, 2) });
    expect(msgs).toHaveLength(1);
    expect(msgs[0]).toMatchObject({
      type: 'autokernel-result',
      id: 11,
      served: name(16, 2),
      config: { ...base({ wx: 16, cols: 2 }), plane: 4 },
      verdict: { pass: true, mismatches: 0 },
    });
    expect((msgs[0] as { ms: number }).ms).toBeCloseTo(0.001, 9);
    expect(msgs[0]).not.toHaveProperty('fallback');
  });

  it('without a cached winner serves the incumbent; with one of another space, says why', async () => {
    const cold = await serve({ type: 'autokernel', id: 12, base: base() });
    expect(cold.msgs[0]).toMatchObject({ served: 'incumbent', config: { params: { wx: 8, cols: 1 } } });
    expect(cold.msgs[0]).not.toHaveProperty('fallback');
    const stale = await serve({ type: 'autokernel', id: 12, base: base(), cachedWinner: 'WX=5,COLS=1' });
    expect(stale.msgs[0]).toMatchObject({
      served: 'incumbent',
      fallback: 'cached winner "WX=5,COLS=1" is not a config of this space',
    });
  });

  it('a pick that cannot run here is a shape error naming it', async () => {
    // The incumbent builds, but the family refuses it on this adapter.
    const refused: KernelFamily = {
      ...toyFamily,
      validate: (config, caps) =>
        config.params.wx === 8 ? ['wx = 8 is refused here'] : toyFamily.validate(config, caps),
    };
    const { msgs } = await serve(
      { type: 'autokernel', id: 13, base: base() },
      { kernels: createRegistry([refused]) },
    );
    expect(msgs).toEqual([
      {
        type: 'error',
        id: 13,
        kind: 'shape',
        message: 'the incumbent config cannot run on this adapter: wx = 8 is refused here',
      },
    ]);
  });

  it('a cancel is a cancelled reply', async () => {
    const { msgs } = await serve({ type: 'autokernel', id: 14, base: base() }, { cancelAfter: 0 });
    expect(msgs).toEqual([{ type: 'cancelled', id: 14 }]);
  });
});
