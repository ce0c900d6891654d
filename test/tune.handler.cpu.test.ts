// The worker's 'tune' / 'autokernel' handler on a CPU device (test/cpuDevice.ts): the toy family's kernel
// runs as its JavaScript twin and each config costs what the test says on a virtual GPU clock, so which
// config wins, what the claim finds and where a cancel lands are exact. test/tune.handler.test.ts runs the
// handler on Dawn; this file pins its decisions.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DP4A_ARM, SCALAR_ARM } from '../src/kernels/arms';
import type { KernelFamily, RunConfig, WeightOperand } from '../src/kernels/family';
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
import { cpuDevice } from './cpuDevice';
import { TOY_ID, TOY_KERNELS, toyCatalog, toyFamily } from './toyFamily';
import { toyScheduleOf, toyTwin } from './toyTwin';

/** A toy config's name in the search space, from its WGSL. */
const nameOf = (code: string) => name(toyScheduleOf(code).wx, toyScheduleOf(code).cols);
const name = (wx: number, cols: number) => `WX=${wx},COLS=${cols}`;

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
const INCUMBENT = name(8, 1);

/** GPU ns per run: 0.1 ms times a config's place in RANKED (1-based). */
const rankedCost = (config: string) => 1e5 * (1 + RANKED.indexOf(config));

/** Where a hunt is: its search, the finalists' re-timings, the whole-output checks, the claim. */
type Phase = 'search' | 'finals' | 'verify' | 'claim';

const base = (params: Record<string, number> = {}, arm: RunConfig['arm'] = 'scalar'): RunConfig => ({
  kernel: TOY_ID,
  arm,
  data: { source: 'reference', seed: 0 },
  params: { ...toyCatalog.defaults, ...params },
});

/** Every one of the toy's 12 configs in generation 0, no later generation. */
const ALL: EvolutionParams = { population: 12, generations: 1, seed: 7, measureMs: 1, batches: 2, banks: 1 };
/** Two configs: a hunt that only has to start. */
const SMALL: EvolutionParams = { ...ALL, population: 2 };

/** The search's gate lets every config through (rel_to_max below 1); the family's own gate is bit-exact. */
const lenient: KernelFamily = {
  ...toyFamily,
  search: (config, caps) => ({ ...toyFamily.search!(config, caps), gate: { kind: 'rel-to-max', tol: 1 } }),
};
/** As lenient, and the family's own gate is rel_to_max < 1e-2: one element off by one passes it. */
const tolerant: KernelFamily = {
  ...lenient,
  build: (config, caps, weight) => {
    const b = toyFamily.build(config, caps, weight);
    return { ...b, facts: { ...b.facts, gate: { kind: 'rel-to-max', tol: 1e-2 } } };
  },
};

interface HuntOptions {
  /** GPU ns a run of a config takes (default rankedCost). */
  cost?: (config: string, phase: Phase) => number;
  /** Output elements (from the first) a config gets one too large. */
  wrong?: (config: string, phase: Phase) => number;
  kernels?: Registry<KernelFamily>;
  /** Cancelled once this many entries were posted. */
  cancelAfter?: number;
  /** Called with each message as it is posted. */
  onPost?: (m: WorkerResponse) => void;
  deviceId?: string;
  weight?: WeightOperand;
  /** Configs the search evaluates before the finalists (default 12). */
  searched?: number;
  /** performance.now() reads the virtual GPU clock: wall-clock probes, and so batch lengths, are exact. */
  virtualWall?: boolean;
}

afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * A CPU device running the toy's twin (test/toyTwin.ts), the first `wrong(config, phase)` elements one
 * too large; a run costs `cost(config, phase)` GPU ns.
 */
function toyDevice(
  phase: () => Phase = () => 'search',
  cost: (config: string, phase: Phase) => number = rankedCost,
  wrong?: (config: string, phase: Phase) => number,
) {
  return cpuDevice({
    kernel: toyTwin((code) => wrong?.(nameOf(code), phase()) ?? 0),
    dispatchNs: (code) => cost(nameOf(code), phase()),
  });
}

async function serve(req: Extract<WorkerRequest, { type: 'tune' | 'autokernel' }>, o: HuntOptions = {}) {
  let phase: Phase = 'search';
  let entries = 0;
  const { device, log } = toyDevice(() => phase, o.cost, o.wrong);
  if (o.virtualWall) vi.spyOn(performance, 'now').mockImplementation(() => Number(log.clockNs()) / 1e6);
  const msgs: WorkerResponse[] = [];
  /** Dispatches of each config when each phase began. */
  const at = new Map<Phase, Map<string, number>>();
  const counts = () => {
    const c = new Map<string, number>();
    for (const [code, n] of log.dispatches) c.set(nameOf(code), (c.get(nameOf(code)) ?? 0) + n);
    return c;
  };
  const enter = (p: Phase) => {
    phase = p;
    at.set(p, counts());
  };
  await handleTuneRequest(
    {
      device,
      caps: SWIFTSHADER_CAPS,
      kernels: o.kernels ?? TOY_KERNELS,
      ...(o.deviceId ? { deviceId: o.deviceId } : {}),
      ...(o.weight ? { weight: o.weight } : {}),
      isCancelled: (id) => id === req.id && entries >= (o.cancelAfter ?? Infinity),
    },
    req,
    (m) => {
      msgs.push(m);
      if (m.type === 'tune-progress' && m.entry && ++entries === (o.searched ?? 12)) enter('finals');
      if (m.type === 'tune-progress' && /checking the winner/.test(m.stage ?? '')) enter('verify');
      if (m.type === 'tune-progress' && /re-timing/.test(m.stage ?? '')) enter('claim');
      o.onPost?.(m);
    },
  );
  /** Dispatches of a config from the start of `phase` to the end. */
  const dispatchedSince = (p: Phase, config: string) =>
    (counts().get(config) ?? 0) - (at.get(p)?.get(config) ?? 0);
  return { msgs, log, dispatchedSince };
}

const tune = (o: HuntOptions & { evo?: EvolutionParams; id?: number; base?: RunConfig } = {}) =>
  serve({ type: 'tune', id: o.id ?? 1, base: o.base ?? base(), evo: o.evo ?? ALL }, o);

function reportOf(msgs: readonly WorkerResponse[]): TuneReport {
  const done = msgs.at(-1);
  if (done?.type !== 'tune-done') throw new Error(`no report: ${JSON.stringify(done)}`);
  return done.report;
}

const stages = (msgs: readonly WorkerResponse[]) =>
  msgs.flatMap((m) => (m.type === 'tune-progress' && !m.entry ? [m.stage] : []));

/** `n` elements off in every config but those listed. */
const allWrongBut =
  (...right: string[]) =>
  (config: string) =>
    right.includes(config) ? 0 : 1;

describe('a hunt on the CPU device', () => {
  it('reports every config, the fastest verified one as winner, and the claim over the incumbent', async () => {
    const t0 = performance.now();
    const { msgs, log } = await tune();
    const wall = performance.now() - t0;
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
    expect(report.bestMs).toBeCloseTo(0.1, 9);
    expect(report.incumbentMs).toBeCloseTo(0.7, 9);
    expect(report.entries).toHaveLength(12);
    expect(report.bestPerGeneration).toHaveLength(1);
    expect(report.bestPerGeneration[0]).toBeCloseTo(0.1, 9);
    expect(Date.parse(report.startedAt)).toBeGreaterThan(Date.parse('2020-01-01'));
    expect(report.durationMs).toBeGreaterThan(0);
    expect(report.durationMs).toBeLessThanOrEqual(wall);
    // The claim: incumbent (a) and winner (b), three rounds each; b is 7x faster.
    expect(report.claim?.verdict).toBe('faster');
    expect(report.claim!.ratio).toBeCloseTo(7, 6);
    expect(report.claim!.rounds.incumbentMs.map((ms) => ms.toFixed(6))).toEqual(Array(3).fill('0.700000'));
    expect(report.claim!.rounds.winnerMs.map((ms) => ms.toFixed(6))).toEqual(Array(3).fill('0.100000'));
    // The finalists: the search's three fastest, then the seeds (the incumbent first) not among them.
    expect(report.finals!.map((f) => f.config)).toEqual([
      name(16, 2),
      name(32, 2),
      name(16, 1),
      INCUMBENT,
      name(4, 2),
    ]);
    expect(stages(msgs)).toEqual([
      'checking the winner on its whole output',
      're-timing incumbent and winner interleaved',
    ]);
    // Progress: one message per config as it is measured, then the stages, then the report.
    const progress = msgs.filter((m) => m.type === 'tune-progress' && m.entry);
    expect(progress).toHaveLength(12);
    expect(progress[0]).toMatchObject({
      type: 'tune-progress',
      id: 1,
      generation: 0,
      evaluated: 1,
      stage: 'searching',
    });
    expect(msgs.at(-2)).toMatchObject({ type: 'tune-progress', id: 1, generation: 0, evaluated: 12 });
    expect((msgs.at(-2) as { bestMs: number }).bestMs).toBeCloseTo(0.1, 9);
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
    expect(entry.ms).toBeCloseTo(0.1, 9);
    expect(entry.samples).toHaveLength(2);
    expect(Object.keys(entry.phases!)).toEqual(['compileMs', 'verifyMs', 'benchmarkMs']);
    expect(Date.parse(entry.at!)).toBeGreaterThan(0);
    expect(entry).not.toHaveProperty('reason');
  });

  it('a config the family refuses is entered as rejected, with the reason and nothing measured', async () => {
    const picky: KernelFamily = {
      ...toyFamily,
      validate: (config, caps) =>
        config.params.wx === 32 ? ['wx = 32 is refused here'] : toyFamily.validate(config, caps),
    };
    const report = reportOf((await tune({ kernels: createRegistry([picky]) })).msgs);
    const rejected = report.entries.filter((e) => e.verdict === 'rejected');
    expect(rejected.map((e) => e.config).sort()).toEqual([name(32, 1), name(32, 2), name(32, 4)]);
    expect(rejected[0]).toStrictEqual({
      config: rejected[0]!.config,
      label: rejected[0]!.label,
      params: rejected[0]!.params,
      arm: 'scalar',
      generation: 0,
      verdict: 'rejected',
      ms: Infinity,
      reason: 'wx = 32 is refused here',
      bm: 1,
      bn: 32 * Number(rejected[0]!.params.cols),
      at: rejected[0]!.at,
    });
  });

  it('a config that fails the gate is entered with its reason, and never wins', async () => {
    const report = reportOf((await tune({ wrong: (config) => (config === name(16, 2) ? 5 : 0) })).msgs);
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
    const report = reportOf((await tune({ cost: (config) => (config === INCUMBENT ? 5e4 : 2e5) })).msgs);
    expect(report.winner).toBe(INCUMBENT);
    expect(report.claim).toBeUndefined();
    expect(report.bestMs).toBeCloseTo(0.05, 9);
    expect(report.incumbentMs).toBe(report.bestMs);
  });

  it('a family gate of rel_to_max is named with its tolerance', async () => {
    const report = reportOf((await tune({ kernels: createRegistry([tolerant]) })).msgs);
    expect(report.winnerVerdict).toEqual({
      pass: true,
      gate: 'rel_to_max < 1e-2',
      relToMax: 0,
      mismatches: 0,
    });
  });

  it('the search gate checks a sample of rows on a large problem, and the report says how many', async () => {
    // The toy claims 2^30 operations: past the oracle's budget, so the gate samples rows (all 8 here).
    const large: KernelFamily = {
      ...toyFamily,
      build: (config, caps, weight) => {
        const b = toyFamily.build(config, caps, weight);
        return { ...b, facts: { ...b.facts, ops: 2 ** 30 } };
      },
    };
    const report = reportOf((await tune({ kernels: createRegistry([large]), evo: SMALL })).msgs);
    expect(report.gatedRows).toBe(8);
  });
});

describe('the winner held to the whole-output gate', () => {
  const kernels = createRegistry([lenient]);

  it('a finalist that fails it gives way to the next fastest that passes, in order', async () => {
    const wrong = (config: string) => (config === name(16, 2) ? 1 : config === name(32, 2) ? 2 : 0);
    const report = reportOf((await tune({ kernels, wrong })).msgs);
    expect(report.entries.every((e) => e.verdict === 'measured')).toBe(true);
    expect(report.winner).toBe(name(16, 1));
    expect(report.winnerVerdict).toEqual({ pass: true, gate: 'bit-exact', relToMax: 0, mismatches: 0 });
    expect(report.claim?.verdict).toBe('faster');
  });

  it('no more than four candidates are checked; when none passes there is no winner', async () => {
    // Each config off in as many elements as its place: the verdict shown is the last one checked.
    const report = reportOf((await tune({ kernels, wrong: (config) => RANKED.indexOf(config) + 1 })).msgs);
    expect(report.winner).toBe('');
    expect(report).not.toHaveProperty('winnerConfig');
    expect(report.bestMs).toBe(Infinity);
    expect(report.claim).toBeUndefined();
    // Checked: the finalists by their re-timing, 16x2, 32x2, 16x1 and then 8x1 (the 7th fastest), not the
    // fifth finalist 4x2.
    expect(report.winnerVerdict).toMatchObject({ pass: false, gate: 'bit-exact', mismatches: 7 });
    // The incumbent's own figure stands without a winner to compare with.
    expect(report.incumbentMs).toBeCloseTo(0.7, 9);
  });

  it('after the finalists, the fastest of the other measured configs is checked next', async () => {
    // The seeds are among the three fastest: three finalists. They fail the whole-output gate, and of
    // the rest the fastest (32x4) passes -- not the first evaluated one (32x2, slower).
    const order = [INCUMBENT, name(4, 2), name(16, 2), name(32, 4), name(16, 1), name(32, 2)];
    const cost = (config: string) =>
      1e5 * (1 + (order.includes(config) ? order.indexOf(config) : 10 + RANKED.indexOf(config)));
    const report = reportOf(
      (await tune({ kernels, cost, wrong: allWrongBut(name(32, 4), name(32, 2)) })).msgs,
    );
    expect(report.finals!.map((f) => f.config)).toEqual([INCUMBENT, name(4, 2), name(16, 2)]);
    expect(report.winner).toBe(name(32, 4));
  });
});

describe('the claim decides between incumbent and winner', () => {
  /** In the claim the winner (16x2) runs as slowly as the incumbent. */
  const noFaster = (config: string, phase: Phase) =>
    phase === 'claim' && config === name(16, 2) ? 7e5 : rankedCost(config);

  it('a winner that is not measurably faster leaves the incumbent, held to the whole-output gate', async () => {
    // The incumbent is one element off, inside the family's tolerance: its verdict is the one shown.
    const report = reportOf(
      (
        await tune({
          kernels: createRegistry([tolerant]),
          cost: noFaster,
          wrong: (config) => (config === INCUMBENT ? 1 : 0),
        })
      ).msgs,
    );
    expect(report.claim?.verdict).toBe('no measurable difference');
    expect(report.winner).toBe(INCUMBENT);
    expect(report.winnerConfig).toEqual(base({ wx: 8, cols: 1 }));
    expect(report.bestMs).toBeCloseTo(0.7, 9);
    expect(report.incumbentMs).toBeCloseTo(0.7, 9);
    expect(report.winnerVerdict).toMatchObject({ pass: true, gate: 'rel_to_max < 1e-2', mismatches: 0 });
    expect(report.winnerVerdict!.relToMax).toBeGreaterThan(0);
  });

  it("an incumbent kept under a bit-exact gate shows that gate's name", async () => {
    const report = reportOf((await tune({ cost: noFaster })).msgs);
    expect(report.winner).toBe(INCUMBENT);
    expect(report.winnerVerdict).toEqual({ pass: true, gate: 'bit-exact', relToMax: 0, mismatches: 0 });
  });

  it('an incumbent that fails the whole-output gate does not stay: the challenger does', async () => {
    const report = reportOf(
      (
        await tune({
          kernels: createRegistry([lenient]),
          cost: noFaster,
          // Wrong from the whole-output checks on: the claim's timings pass the lenient gate.
          wrong: (config, phase) =>
            config === INCUMBENT && (phase === 'verify' || phase === 'claim') ? 3 : 0,
        })
      ).msgs,
    );
    expect(report.claim?.verdict).toBe('no measurable difference');
    expect(report.winner).toBe(name(16, 2));
    // The challenger's finalist figure; no incumbent figure beside it.
    expect(report.bestMs).toBeCloseTo(0.1, 9);
    expect(report).not.toHaveProperty('incumbentMs');
    // The verdict shown is the challenger's, not the failed check of the incumbent.
    expect(report.winnerVerdict).toEqual({ pass: true, gate: 'bit-exact', relToMax: 0, mismatches: 0 });
  });

  it('a winner the claim confirms keeps its own verdict; the incumbent is not checked', async () => {
    const report = reportOf(
      (
        await tune({
          kernels: createRegistry([tolerant]),
          wrong: (config) => (config === INCUMBENT ? 1 : 0),
        })
      ).msgs,
    );
    expect(report.winner).toBe(name(16, 2));
    expect(report.winnerVerdict).toEqual({
      pass: true,
      gate: 'rel_to_max < 1e-2',
      relToMax: 0,
      mismatches: 0,
    });
  });

  it("re-times incumbent and winner with batches 4x the search's", async () => {
    // performance.now() reads the GPU clock: a 0.1 ms probe makes an 8 ms batch 80 runs.
    const { msgs, dispatchedSince } = await tune({ evo: { ...ALL, measureMs: 2 }, virtualWall: true });
    expect(reportOf(msgs).claim?.verdict).toBe('faster');
    // Three rounds of the winner: a gated run, a probe run and 2 batches of 80 runs each.
    expect(dispatchedSince('claim', name(16, 2))).toBe(3 * (1 + 1 + 2 * 80));
  });
});

describe("the incumbent's figure", () => {
  it("is its finalist re-timing's where it has one", async () => {
    // No config passes the whole-output gate: the figure shown is the incumbent's alone.
    const report = reportOf(
      (
        await tune({
          kernels: createRegistry([lenient]),
          wrong: (_, phase) => (phase === 'verify' ? 1 : 0),
          cost: (config, phase) => (config === INCUMBENT && phase === 'finals' ? 6.5e5 : rankedCost(config)),
        })
      ).msgs,
    );
    expect(report.winner).toBe('');
    expect(report.incumbentMs).toBeCloseTo(0.65, 9);
  });

  it("is the search's where its re-timing failed the gate", async () => {
    const report = reportOf(
      (
        await tune({
          wrong: (config, phase) =>
            phase === 'verify' || (config === INCUMBENT && phase === 'finals') ? 1 : 0,
        })
      ).msgs,
    );
    expect(report.winner).toBe('');
    expect(report.finals!.find((f) => f.config === INCUMBENT)!.ms).toBe(Infinity);
    expect(report.incumbentMs).toBeCloseTo(0.7, 9);
  });

  it('is absent when the incumbent never passed the gate: the winner stands without a claim', async () => {
    const { msgs } = await tune({ wrong: (config) => (config === INCUMBENT ? 1 : 0) });
    const report = reportOf(msgs);
    expect(report.winner).toBe(name(16, 2));
    expect(report).not.toHaveProperty('incumbentMs');
    expect(report.claim).toBeUndefined();
    expect(stages(msgs)).toEqual(['checking the winner on its whole output']);
  });
});

describe('the arm the hunt ran', () => {
  /** The toy with a dp4a arm too (the same kernel), its search setting the arm `armOf` a config. */
  const withArms = (armOf: (wx: number, cols: number) => RunConfig['arm']): KernelFamily => ({
    ...lenient,
    arms: [SCALAR_ARM, DP4A_ARM],
    validate: (config, caps) =>
      config.arm === 'subgroup-matrix'
        ? ['no subgroup matrices here']
        : toyFamily.validate({ ...config, arm: 'scalar' }, caps),
    build: (config, caps, weight) => lenient.build({ ...config, arm: 'scalar' }, caps, weight),
    search: (config, caps) => {
      const s = lenient.search!(config, caps);
      return {
        ...s,
        apply: (cfg) => {
          const c = s.apply(cfg);
          return { ...c, arm: armOf(Number(c.params.wx), Number(c.params.cols)) };
        },
      };
    },
  });

  it("is the base's arm in the report when every entry ran one arm, winner or not", async () => {
    const kernels = createRegistry([withArms((wx) => (wx === 32 ? 'subgroup-matrix' : 'dp4a'))]);
    const report = reportOf(
      (await tune({ kernels, wrong: (_, phase) => (phase === 'verify' ? 1 : 0) })).msgs,
    );
    expect(report.winner).toBe('');
    // The rejected subgroup-matrix configs did not run.
    expect(report.entries.filter((e) => e.verdict === 'rejected')).toHaveLength(3);
    expect(report.base).toEqual(base({}, 'dp4a'));
  });

  it("is the winner's arm when the entries ran several", async () => {
    const kernels = createRegistry([withArms((_, cols) => (cols === 1 ? 'scalar' : 'dp4a'))]);
    const report = reportOf((await tune({ kernels })).msgs);
    expect(report.winner).toBe(name(16, 2));
    expect(report.base.arm).toBe('dp4a');
    const scalarWins = reportOf(
      (await tune({ kernels, wrong: (config) => (config === name(16, 2) || config === name(32, 2) ? 1 : 0) }))
        .msgs,
    );
    expect(scalarWins.winner).toBe(name(16, 1));
    expect(scalarWins.base.arm).toBe('scalar');
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
    const { msgs } = await tune({ deviceId: 'core-id', evo: SMALL });
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
      entry(4, 1, { ms: 0.05 }),
      entry(4, 4, { verdict: 'failed-gate', ms: Infinity }),
      entry(32, 4, { verdict: 'failed-gate', ms: Infinity, reason: 'was wrong' }),
      entry(8, 4, { verdict: 'rejected', ms: Infinity, reason: 'too big' }),
    ];
    const { msgs, dispatchedSince } = await serve({ type: 'tune', id: 4, base: base(), evo: ALL, resume });
    const report = reportOf(msgs);
    const byName = new Map(report.entries.map((e) => [e.config, e]));
    // The replayed measurement is not taken again: its figure is the stored one.
    expect(byName.get(name(4, 1))).toMatchObject({ verdict: 'measured', ms: 0.05, worstRel: 0 });
    expect(byName.get(name(4, 1))).not.toHaveProperty('reason');
    expect(byName.get(name(4, 4))).toMatchObject({
      verdict: 'failed-gate',
      reason: 'failed the correctness gate',
    });
    expect(byName.get(name(32, 4))).toMatchObject({ verdict: 'failed-gate', reason: 'was wrong' });
    // A rejection is not replayed (the adapter or the build may take it now): it is measured.
    expect(byName.get(name(8, 4))).toMatchObject({ verdict: 'measured' });
    expect(dispatchedSince('search', name(4, 4))).toBe(0);
    expect(dispatchedSince('search', name(32, 4))).toBe(0);
    expect(dispatchedSince('search', name(8, 4))).toBeGreaterThan(0);
    // The replayed 4x1 is the search's fastest: as a finalist it is re-timed for real (and loses).
    expect(dispatchedSince('search', name(4, 1))).toBeGreaterThan(0);
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
      const { device } = toyDevice();
      const msgs: WorkerResponse[] = [];
      await handleTuneRequest(
        { device, caps: SWIFTSHADER_CAPS, kernels: createRegistry([lenient]), isCancelled: () => cancel },
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
    let checking = false;
    let cancel = false;
    const broken: KernelFamily = {
      ...toyFamily,
      build: (config, caps, weight) => {
        // The winner's whole-output check fails to build, and the user cancelled meanwhile.
        if (checking) {
          cancel = true;
          throw new Error('the device went away');
        }
        return toyFamily.build(config, caps, weight);
      },
    };
    const { device } = toyDevice();
    const msgs: WorkerResponse[] = [];
    await handleTuneRequest(
      { device, caps: SWIFTSHADER_CAPS, kernels: createRegistry([broken]), isCancelled: () => cancel },
      { type: 'tune', id: 6, base: base(), evo: SMALL },
      (m) => {
        msgs.push(m);
        if (m.type === 'tune-progress' && /checking the winner/.test(m.stage ?? '')) checking = true;
      },
    );
    expect(msgs.at(-1)).toEqual({ type: 'cancelled', id: 6 });
  });

  it('errors carry their kind: shape, validation or internal', async () => {
    const untuned = { ...toyFamily, tuning: undefined } as unknown as KernelFamily;
    const failing = (e: Error): KernelFamily => ({
      ...toyFamily,
      search: () => {
        throw e;
      },
    });
    const errorOf = async (kernels: Registry<KernelFamily>, b = base()) =>
      (await serve({ type: 'tune', id: 7, base: b, evo: SMALL }, { kernels })).msgs;
    expect(await errorOf(createRegistry([untuned]))).toEqual([
      { type: 'error', id: 7, kind: 'shape', message: `${toyCatalog.title} has no tuning` },
    ]);
    expect(await errorOf(createRegistry([failing(new RangeError('k = 0'))]))).toEqual([
      { type: 'error', id: 7, kind: 'shape', message: 'k = 0' },
    ]);
    expect(await errorOf(createRegistry([failing(new TypeError('a bug'))]))).toEqual([
      { type: 'error', id: 7, kind: 'internal', message: 'a bug' },
    ]);
    expect((await errorOf(TOY_KERNELS, base({ m: 0 }))).at(-1)).toMatchObject({ kind: 'shape' });
  });

  it("the device's errors are validation errors: a shader that does not compile, a failing dispatch", async () => {
    const compiles = cpuDevice({
      compile: () => [
        {
          type: 'error',
          message: 'no',
          lineNum: 1,
          linePos: 1,
          offset: 0,
          length: 1,
        } as GPUCompilationMessage,
      ],
    });
    const dispatchFails = cpuDevice({
      kernel: () => () => {
        throw new Error('lost');
      },
    });
    for (const { device } of [compiles, dispatchFails]) {
      const msgs: WorkerResponse[] = [];
      await handleTuneRequest(
        { device, caps: SWIFTSHADER_CAPS, kernels: TOY_KERNELS, isCancelled: () => false },
        { type: 'autokernel', id: 8, base: base() },
        (m) => msgs.push(m),
      );
      expect(msgs).toEqual([{ type: 'error', id: 8, kind: 'validation', message: expect.any(String) }]);
    }
  });

  it("the real tensor the core read is what the family's plans are built on", async () => {
    const weights: unknown[] = [];
    const recording: KernelFamily = {
      ...toyFamily,
      build: (config, caps, weight) => {
        weights.push(weight);
        return toyFamily.build(config, caps);
      },
    };
    const weight = { tensor: 'blk.0.ffn_down.weight' } as unknown as WeightOperand;
    await tune({ kernels: createRegistry([recording]), weight, evo: SMALL });
    await serve(
      { type: 'autokernel', id: 9, base: base() },
      { kernels: createRegistry([recording]), weight },
    );
    expect(weights.length).toBeGreaterThan(0);
    expect(weights.every((w) => w === weight)).toBe(true);
  });
});

describe('autokernel', () => {
  it('serves the cached winner: verified, measured once, resolved for this adapter', async () => {
    const { msgs, log } = await serve({
      type: 'autokernel',
      id: 11,
      base: base(),
      cachedWinner: name(16, 2),
    });
    expect(msgs).toHaveLength(1);
    expect(msgs[0]).toMatchObject({
      type: 'autokernel-result',
      id: 11,
      served: name(16, 2),
      config: { ...base({ wx: 16, cols: 2 }), plane: 4 },
      verdict: { pass: true, mismatches: 0 },
    });
    expect((msgs[0] as { ms: number }).ms).toBeCloseTo(0.1, 9);
    expect(msgs[0]).not.toHaveProperty('fallback');
    expect(log.liveBuffers()).toBe(0);
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

  it('a cached winner this adapter refuses gives way to the incumbent, saying why', async () => {
    const picky: KernelFamily = {
      ...toyFamily,
      validate: (config, caps) =>
        config.params.wx === 32 ? ['wx = 32 is refused here'] : toyFamily.validate(config, caps),
    };
    const { msgs } = await serve(
      { type: 'autokernel', id: 15, base: base(), cachedWinner: name(32, 2) },
      { kernels: createRegistry([picky]) },
    );
    expect(msgs[0]).toMatchObject({
      type: 'autokernel-result',
      served: 'incumbent',
      fallback: `cached winner ${name(32, 2)} rejected here: wx = 32 is refused here`,
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
