// The bench harness, importable (test/bench.test.ts runs its quick mode in-process): every family at LLM
// prefill shapes through the same path the app and the tuner take -- each config built by its family,
// prepared and timed by the one runner (src/kernels/gpu/runner.ts) on inputs uploaded once with cold
// weight banks, gated against the family's oracle on sampled rows plus a check that every element was
// written -- and the ratios that must come from one run. See docs/benchmarks.md for the method.
import { KERNEL_FAMILIES } from '../src/kernels';
import { gemmF32BaselineFamily } from '../src/kernels/baseline';
import { knobLabel, type FamilyParams, type KernelFamily, type RunConfig } from '../src/kernels/family';
import { shapeParams } from '../src/kernels/models';
import { defaultArm, resolveConfig } from '../src/kernels/gpu/arms';
import { bufferBytes } from '../src/kernels/gpu/plan';
import { clockWarmMs, banksFor } from '../src/kernels/gpu/runner';
import { Evolution, finalsWallMs, type FinalTiming } from '../src/kernels/tune';
import { PlanEvaluator, ProblemSession } from '../src/workers/tune';
import type { BenchGpu } from './dawn';

/**
 * A `--shapes` list: "m,n,k;m,n,k". Throws on a malformed entry.
 * @example parseShapes('2048,4096,4096;32,11008,4096')
 */
export function parseShapes(list: string): Shape[] {
  return list.split(';').map((s) => {
    const parts = s.split(',').map(Number);
    const [m, n, k] = parts;
    if (parts.length !== 3 || !parts.every((v) => Number.isSafeInteger(v) && v > 0))
      throw new Error(`--shapes: bad shape "${s}" (want m,n,k with positive whole numbers)`);
    return { m: m!, n: n!, k: k! };
  });
}

export interface Shape {
  m: number;
  n: number;
  k: number;
}

/** An MoE case: tokens routed top-k over `experts` experts of [n, k] each. */
export interface MoeCase {
  tokens: number;
  experts: number;
  topk: number;
  n: number;
  k: number;
}

export interface BenchOptions {
  quick: boolean;
  tune: boolean;
  /** Tune the tunable families at every shape, not only the headline shape. */
  tuneEveryShape?: boolean;
  /** Tune the dense tunable families at these shapes too (e.g. the small-m ones). */
  tuneShapes?: Shape[];
  /** Tune the MoE family at these cases (experts x tokens): its route, arm and knobs by measurement. */
  moeTune?: { experts: number; tokens: number }[];
  /** Beside each MoE case, the dense f16 plan at m = slots (one weight): the MoE route's yardstick. */
  moeDense?: boolean;
  moe: boolean;
  /** MoE cases (default: 8 and 64 experts x 32..2048 tokens, top-2, n = k = 4096). */
  moeCases?: MoeCase[];
  /** Dense rows skipped (an MoE-only run). */
  dense?: boolean;
  /** Timed batches a row (the runner times as many again when they disagree; the fastest counts). */
  reps: number;
  /** GPU time per timed batch, ms. */
  targetMs: number;
  /**
   * Times each passing row is timed, in sweeps over one problem's rows (the second in reverse order):
   * the row keeps the fastest sweep. Default 1. A slow phase can outlast a row's batches
   * (docs/decisions/0006-timing-method.md); a later window sees past it.
   */
  sweeps?: number;
  /** Only rows whose `${id}@${shape}` matches. */
  filter?: RegExp;
  shapes?: Shape[];
  /** torch_baseline.py output from the same machine. */
  torch?: unknown;
  log?: (line: string) => void;
  /** Called after every row with the result so far (the CLI checkpoints its JSON: a crash keeps the rows). */
  onProgress?: (partial: BenchResult) => void;
  /** Test hook: rewrite a config's main-pass WGSL before it runs (proves a wrong kernel is flagged). */
  mutateWgsl?: (id: string, wgsl: string) => string;
}

export interface Correctness {
  pass: boolean;
  relToMax: number;
  /** Output elements compared with the oracle. */
  samples: number;
  /** Every output element was written (no NaN from the poisoned buffer survived). */
  allWritten: boolean;
  tol: number;
}

export interface BenchRow {
  id: string;
  family: string;
  weights: 'q8_0' | 'q4k' | 'f32' | 'q4';
  /** What its throughput counts: int8 ops, f16 or f32 FLOPs (the config's, for a family of two routes). */
  arithmetic?: 'int8' | 'f16' | 'f32';
  arm: string;
  /** 'incumbent' | 'tuned' | 'fixed' (a config the product seeds or defaults to) | 'baseline'. */
  role: string;
  tile: string;
  m: number;
  n: number;
  k: number;
  experts?: number;
  topk?: number;
  ms?: number;
  msSamples?: number[];
  /** Runs per timed batch. */
  iters?: number;
  timing?: string;
  tops?: number;
  weightGBs?: number;
  /** Fraction of the adapter's datasheet peak for this arithmetic (when known). */
  peakFraction?: number;
  correctness?: Correctness;
  /** Why it did not run (arm unavailable, shape, limits, compile error). */
  skipped?: string;
  error?: string;
  vsF32?: number;
  vsScalar?: number;
  vsIncumbent?: number;
  /** ms of each pass timed alone when a plan has several (ms is the whole plan, back to back). */
  passMs?: number[];
  /** With sweeps > 1: each sweep's ms, in the order timed; `ms` is the fastest sweep's. */
  msSweeps?: number[];
  /** When its timing began and finished (ISO 8601): the window to line up with a clock log. */
  timedFrom?: string;
  at?: string;
}

export interface Peak {
  source: string;
  int8Tops: number;
  f16Tflops: number;
  f32Tflops: number;
  hbmGBs: number;
  l2Bytes: number;
}

export interface TuneSummary {
  family: string;
  arm: string;
  shape: Shape;
  winner?: string;
  bestMs: number;
  evaluated: number;
  failedGate: number;
  rejected: number;
  /** The finalists' longer re-timings; the winner is the fastest of them. */
  finals?: FinalTiming[];
}

export interface Headline {
  shape: Shape;
  bestInt8?: { id: string; ms: number; tops: number };
  bestAny?: { id: string; ms: number; tops: number };
  /** torch._int_mm per layout, timed as the bench times a row (msCall: one call at a time). */
  torchIntMm?: { layout: string; ms: number; tops: number; msCall?: number }[];
  /** torch._int_mm ms (its fastest layout) / best WebGPU int8 MMQ ms. */
  ratioInt8?: number;
  ratioAny?: number;
  /** torch's f16 matmul at the shape (torch_baseline.py): cuBLAS on f16 operands, same card. */
  torchF16Mm?: { ms: number; tflops: number; msCall?: number };
  /** What the best plan may take for 0.5 x torch._int_mm (its fastest layout): twice torch's time. */
  goalMs?: number;
  /** The best plan's last pass (its GEMM) when it has several passes. */
  gemmPassMs?: number;
  goalGemmPassMs?: number;
}

export interface BenchResult {
  date: string;
  quick: boolean;
  adapter: { vendor: string; architecture: string; description: string; plane: number; features: string[] };
  adapterInfo?: Record<string, unknown>;
  dawnFlags: readonly string[];
  peak?: Peak;
  rows: BenchRow[];
  tuning: TuneSummary[];
  headline?: Headline;
  torch?: unknown;
  /** ONNX Runtime's version when its rows ran, or why they did not. */
  ort?: { version?: string; note?: string };
}

// NVIDIA's H200 SXM datasheet (the H100 SXM's tensor rates, dense): int8 1979 TOPS, f16 989 TFLOP/s,
// f32 (non-tensor) 67 TFLOP/s, HBM3e 4.8 TB/s; 60 MB of L2 (PyTorch's device properties on the lent card).
const H200_PEAK: Peak = {
  source:
    'NVIDIA H200 SXM datasheet (dense tensor rates = H100 SXM): int8 1979 TOPS, f16 989 TFLOP/s, f32 67 TFLOP/s, 4.8 TB/s',
  int8Tops: 1979,
  f16Tflops: 989,
  f32Tflops: 67,
  hbmGBs: 4800,
  l2Bytes: 60 * 1024 * 1024,
};

function peakOf(gpu: BenchGpu): Peak | undefined {
  const info = gpu.adapter.info as unknown as Record<string, unknown>;
  const text = `${String(info.device ?? '')} ${gpu.caps.description}`.toLowerCase();
  return gpu.caps.vendor === 'nvidia' && text.includes('h200') ? H200_PEAK : undefined;
}

type Log = (s: string) => void;

const familyOf = (id: string): KernelFamily => {
  const f =
    KERNEL_FAMILIES.find((x) => x.id === id) ??
    (id === gemmF32BaselineFamily.id ? gemmF32BaselineFamily : undefined);
  if (!f) throw new Error(`no family ${id}`);
  return f;
};

/** The row name of a config: its tile (and staging, when the family has one) or '-'. */
function configName(c: RunConfig): string {
  return knobLabel(familyOf(c.kernel), c.params);
}

/** A row's shape as the tables print it: "MxNxK", and " eE" for an MoE row over E experts. */
export const rowShape = (r: BenchRow): string => `${r.m}x${r.n}x${r.k}${r.experts ? ` e${r.experts}` : ''}`;

/** One problem's configs to bench: each its config and its role. */
interface Candidate {
  config: RunConfig;
  role: string;
}

/**
 * Run the bench on an open GPU. Returns every row (measured, skipped or failed), the tuning summaries and
 * the headline ratio; `opts.log` receives progress and the final table.
 * @example const r = await runBench(gpu, { quick: true, tune: true, moe: true, reps: 1, targetMs: 1 });
 */
export async function runBench(gpu: BenchGpu, opts: BenchOptions): Promise<BenchResult> {
  const log: Log = opts.log ?? (() => {});
  const { caps, device } = gpu;
  const peak = peakOf(gpu);
  const l2 = peak?.l2Bytes ?? 8 * 1024 * 1024;
  const warmMs = opts.quick ? 0 : clockWarmMs(caps);
  const timing = { targetMs: opts.targetMs, batches: opts.reps, passes: true };
  const sweeps = Math.max(1, Math.floor(opts.sweeps ?? 1));
  const shapes: Shape[] =
    opts.shapes ??
    (opts.quick
      ? [{ m: 32, n: 64, k: 256 }]
      : [32, 128, 512, 2048].flatMap((m) =>
          [
            [4096, 4096],
            [11008, 4096],
            [4096, 11008],
          ].map(([n, k]) => ({ m, n: n!, k: k! })),
        ));
  const isHeadline = (s: Shape) => s.m === 2048 && s.n === 4096 && s.k === 4096;
  const head = shapes.find(isHeadline) ?? shapes[0]!;
  const result: BenchResult = {
    date: new Date().toISOString(),
    quick: opts.quick,
    adapter: {
      vendor: caps.vendor,
      architecture: caps.architecture,
      description: caps.description,
      plane: gpu.caps.subgroups ? gpu.caps.subgroupMaxSize : 32,
      features: caps.features,
    },
    dawnFlags: gpu.flags,
    ...(peak ? { peak } : {}),
    rows: [],
    tuning: [],
    ...(opts.torch ? { torch: opts.torch } : {}),
  };
  const want = (id: string) => !opts.filter || opts.filter.test(id);
  const data = { source: 'synthetic' as const, seed: 1 };
  const config = (id: string, params: Record<string, number | string>, arm?: string): RunConfig => {
    const f = familyOf(id);
    const p = { ...f.defaults, ...params };
    return { kernel: id, arm: (arm ?? defaultArm(f, caps, p)) as RunConfig['arm'], data, params: p };
  };
  /** Every arm of a family this adapter lists (rows of unavailable arms are recorded as skipped). */
  const arms = (id: string) => familyOf(id).arms.map((a) => a.arm);

  /** Bench a problem's candidates on one session: gate, time, sweep. */
  const benchProblem = async (
    familyId: string,
    base: RunConfig,
    candidates: Candidate[],
    row: (c: RunConfig, role: string) => BenchRow,
    tuned: Candidate[] = [],
    keep?: Map<string, RunConfig>,
  ) => {
    const all = [...candidates, ...tuned];
    const rows = all.map((c) => row(c.config, c.role)).filter((r) => want(`${r.id}@${rowShape(r)}`));
    if (!rows.length) return;
    const family = withMutation(familyOf(familyId), opts.mutateWgsl);
    let s: ProblemSession;
    try {
      // Banks so consecutive runs read >= 4x the L2 of distinct weight bytes (the plan's weight buffers).
      const plan = family.build(resolveConfig(base, caps), caps).plan;
      const bankBytes = plan.buffers
        .filter((b) => b.role === 'weight')
        .reduce((a, b) => a + bufferBytes(b), 0);
      s = new ProblemSession(device, caps, family, base, {
        banks: opts.quick ? 1 : banksFor(bankBytes, l2),
        warmMs,
      });
    } catch (e) {
      for (const r of rows) result.rows.push({ ...r, error: message(e) });
      return;
    }
    const done: { row: BenchRow; c: RunConfig }[] = [];
    try {
      for (const c of all) {
        const r = row(c.config, c.role);
        if (!want(`${r.id}@${rowShape(r)}`)) continue;
        const why = s.problems(c.config);
        if (why) {
          result.rows.push({ ...r, skipped: why });
          log(rowLine(result.rows.at(-1)!));
          continue;
        }
        await measure(s, r, c.config, timing);
        result.rows.push(r);
        log(rowLine(r));
        if (r.correctness?.pass) {
          done.push({ row: r, c: c.config });
          keep?.set(r.id, c.config);
        }
        opts.onProgress?.(result);
      }
      for (let sweep = 2; sweep <= sweeps; sweep++)
        for (const { row: r, c } of [...done].reverse()) {
          const before = r.ms!;
          const again: BenchRow = { ...r };
          await measure(s, again, c, timing);
          r.msSweeps = [...(r.msSweeps ?? [before]), again.ms ?? Infinity];
          if (again.ms !== undefined && again.ms < before)
            Object.assign(r, { ...again, msSweeps: r.msSweeps });
          log(`[sweep ${sweep}] ${r.id} ${rowShape(r)}: ${fmt(again.ms, 4)} ms (kept ${fmt(r.ms, 4)})`);
        }
    } finally {
      s.destroy();
    }
  };

  const measure = async (s: ProblemSession, r: BenchRow, c: RunConfig, t: typeof timing) => {
    try {
      r.timedFrom = new Date().toISOString();
      const out = await s.run(c, { ...t, ...(opts.quick ? { maxRuns: 2 } : {}) });
      const { facts } = out;
      const gate = facts.gate;
      r.correctness = {
        pass: out.verdict.pass,
        relToMax: out.verdict.relToMax,
        samples: (s.sampled?.length ?? facts.rows) * facts.cols,
        allWritten: out.unwritten === 0,
        tol: gate.kind === 'bit-exact' ? 0 : gate.tol,
      };
      if (!out.timing) return;
      r.ms = out.timing.ms;
      r.msSamples = out.timing.samples;
      r.iters = out.timing.runs;
      r.timing = out.timing.method;
      if (out.passes) r.passMs = out.passes.map((p) => p.ms);
      r.tops = facts.ops / (r.ms * 1e-3) / 1e12;
      r.arithmetic = r.weights === 'f32' ? 'f32' : (facts.arithmetic ?? familyOf(r.family).arithmetic);
      r.weightGBs = facts.weightBytes / (r.ms * 1e-3) / 1e9;
      if (peak) {
        const rate =
          r.arithmetic === 'f32' ? peak.f32Tflops : r.arithmetic === 'int8' ? peak.int8Tops : peak.f16Tflops;
        r.peakFraction = r.tops / rate;
      }
    } catch (e) {
      r.error = message(e).slice(0, 2000);
    } finally {
      r.at = new Date().toISOString();
    }
  };

  /** Tune a family at a shape through the product's own search (the worker's PlanEvaluator). */
  const tune = async (familyId: string, base: RunConfig, shape: Shape): Promise<RunConfig | undefined> => {
    const family = familyOf(familyId);
    if (!opts.tune || !family.search || !want(`${familyId}/tune`)) return undefined;
    const search = family.search(base, caps);
    const ev = new PlanEvaluator(device, caps, family, search, {
      banks: opts.quick ? 1 : 2,
      batches: opts.quick ? 1 : 3,
      warmMs,
    });
    try {
      const evo = new Evolution(
        opts.quick
          ? { population: 3, generations: 1, measureMs: 1 }
          : { population: 16, generations: 4, measureMs: 10 },
      );
      const rep = await evo.run(search.space, ev, 0x5eed, { seeds: [search.incumbent, ...search.seeds] });
      const winner = rep.winner ? ev.configOf(search.space.parse(rep.winner)!) : undefined;
      result.tuning.push({
        family: familyId,
        arm: winner?.arm ?? '-',
        shape,
        ...(rep.winner ? { winner: rep.winner } : {}),
        bestMs: rep.bestMs,
        evaluated: rep.evaluated,
        failedGate: rep.failedGate.length,
        rejected: rep.rejected.length,
        ...(rep.finals.length ? { finals: rep.finals } : {}),
      });
      log(
        `[tune] ${familyId} at ${shape.m}x${shape.n}x${shape.k}: ${rep.evaluated} configs, winner ${rep.winner ?? 'none'} ${rep.bestMs.toFixed(4)} ms (${rep.failedGate.length} failed the gate, ${rep.rejected.length} rejected)` +
          (rep.finals.length ? `; finalists re-timed in ${fmt(finalsWallMs(rep.finals)! / 1000, 1)} s` : ''),
      );
      return winner;
    } finally {
      ev.destroy();
    }
  };

  // The families: every one that multiplies real weights (catalog `takes`), dense ones at the dense
  // shapes and bank ones (MoE) at the MoE cases, each on every arm at its incumbent, with its search's
  // seeds and its tuned winner when it has a search; the f32 GEMM as the baseline. Nothing here names a
  // family: their declarations say what to run.
  const benched = KERNEL_FAMILIES.filter((f) => f.takes);
  const weightsOf = (f: KernelFamily): BenchRow['weights'] => (f.takes?.format === 'Q8_0' ? 'q8_0' : 'q4k');
  const rowOf =
    (f: KernelFamily, shape: Shape & { experts?: number; topk?: number }) =>
    (c: RunConfig, role: string): BenchRow => ({
      id: `${f.id}/${c.arm}/${configName(c)}`,
      family: f.id,
      weights: f === gemmF32BaselineFamily ? 'f32' : weightsOf(f),
      arm: f === gemmF32BaselineFamily ? 'f32' : c.arm,
      role,
      tile: configName(c),
      ...shape,
    });
  /** A family's candidates at `params`: each arm at its incumbent (or its defaults), then its search's seeds. */
  const candidatesOf = (f: KernelFamily, params: FamilyParams): { base: RunConfig; list: Candidate[] } => {
    const base = config(f.id, params);
    const search = f.search?.(base, caps);
    const incumbent = search ? search.apply(search.incumbent).params : params;
    const list: Candidate[] = arms(f.id)
      .filter((a) => a !== 'scalar' || opts.quick || f.arms.length === 1)
      .map((a) => ({
        config: { ...config(f.id, incumbent, a), params: incumbent },
        role: search ? 'incumbent' : 'fixed',
      }));
    const all = search?.seeds ?? [];
    // Quick: the first and the last seed (a family of two routes seeds each).
    const seeds = opts.quick ? [...new Set([all[0], all.at(-1)])].filter((c) => c !== undefined) : all;
    for (const c of seeds) list.push({ config: search!.apply(c), role: 'fixed' });
    return { base: { ...base, params: incumbent }, list };
  };
  const tunedAt = new Map<string, RunConfig>();
  /** Passing configs by row id (the MoE yardstick reruns the headline's fastest dense one). */
  const configs = new Map<string, RunConfig>();

  const order = [head, ...shapes.filter((s) => s !== head)];
  for (const shape of opts.dense === false ? [] : order) {
    const { m, n, k } = shape;
    log(`\n== ${m} x ${n} x ${k} ==`);
    const tuneHere =
      shape === head ||
      opts.tuneEveryShape ||
      opts.tuneShapes?.some((t) => t.m === m && t.n === n && t.k === k);
    for (const f of benched.filter((x) => !x.takes!.bank)) {
      const params = shapeParams(f, f.defaults, { n, k, rows: m });
      const { base, list } = candidatesOf(f, params);
      const won = tuneHere && f.search ? await tune(f.id, base, shape) : undefined;
      if (won) tunedAt.set(`${f.id}@${m}x${n}x${k}`, won);
      await benchProblem(
        f.id,
        base,
        list,
        rowOf(f, shape),
        won ? [{ config: won, role: 'tuned' }] : [],
        configs,
      );
    }
    const b = gemmF32BaselineFamily;
    await benchProblem(
      b.id,
      config(b.id, { m, n, k }),
      (opts.quick ? ['32x32x16/4x4'] : ['128x128x16/8x8', '64x128x16/4x8', '128x64x16/8x4']).map((tile) => ({
        config: config(b.id, { m, n, k, tile }),
        role: 'baseline',
      })),
      rowOf(b, shape),
    );
  }

  if (opts.moe) {
    const cases =
      opts.moeCases ??
      (opts.quick
        ? [{ tokens: 8, experts: 4, topk: 2, n: 64, k: 256 }]
        : [8, 64].flatMap((experts) =>
            [32, 128, 512, 2048].map((tokens) => ({ tokens, experts, topk: 2, n: 4096, k: 4096 })),
          ));
    // The yardstick: the headline's fastest dense config, rerun at m = slots (one weight, not a bank).
    const headBest = result.rows
      .filter(
        (r) => r.role !== 'baseline' && !r.experts && r.m === head.m && r.n === head.n && r.k === head.k,
      )
      .filter((r) => r.ms !== undefined && r.correctness?.pass && configs.has(r.id))
      .reduce<BenchRow | undefined>((a, r) => (!a || r.ms! < a.ms! ? r : a), undefined);
    for (const c of cases) {
      const slots = c.tokens * c.topk;
      const shape = { m: slots, n: c.n, k: c.k, experts: c.experts, topk: c.topk };
      for (const f of benched.filter((x) => x.takes!.bank)) {
        const params = shapeParams(f, f.defaults, {
          n: c.n,
          k: c.k,
          rows: c.tokens,
          experts: c.experts,
          topk: c.topk,
        });
        const { base, list } = candidatesOf(f, params);
        const won = opts.moeTune?.some((t) => t.experts === c.experts && t.tokens === c.tokens)
          ? await tune(f.id, base, { m: slots, n: c.n, k: c.k })
          : undefined;
        await benchProblem(f.id, base, list, rowOf(f, shape), won ? [{ config: won, role: 'tuned' }] : []);
      }
      if (opts.moeDense && headBest && !opts.quick) {
        const cfg = configs.get(headBest.id)!;
        const f = familyOf(cfg.kernel);
        const at = { ...cfg, params: shapeParams(f, cfg.params, { n: c.n, k: c.k, rows: slots }) };
        await benchProblem(f.id, at, [{ config: at, role: 'fixed' }], rowOf(f, { m: slots, n: c.n, k: c.k }));
      }
    }
  }
  deriveRatios(result.rows);
  result.headline = headline(result, head);
  for (const line of table(result)) log(line);
  for (const line of moeRatioLines(result.rows, opts.torch)) log(line);
  return result;
}

/** What moeRatioLines reads of a torch_baseline.py JSON (key "moe"). */
interface TorchMoe {
  moe?: { experts: number; tokens: number; way: string; ms: number; check?: { pass?: boolean } }[];
}

/**
 * Per MoE case: our fastest passing row (any route and arm) against torch's per-expert loop and
 * `_grouped_mm` from the same command, and against the dense f16 plan at m = slots (one weight).
 * @example for (const l of moeRatioLines(result.rows, torch)) console.log(l);
 */
export function moeRatioLines(rows: readonly BenchRow[], torch?: unknown): string[] {
  const ok = (r: BenchRow) => r.ms !== undefined && !!r.correctness?.pass;
  const t = (torch as TorchMoe | undefined)?.moe ?? [];
  const cases = new Map<string, BenchRow>();
  for (const r of rows)
    if (r.experts && ok(r)) {
      const key = `${r.experts}x${r.m / (r.topk ?? 1)}`;
      const best = cases.get(key);
      if (!best || r.ms! < best.ms!) cases.set(key, r);
    }
  return [...cases.entries()].map(([key, r]) => {
    const tokens = r.m / (r.topk ?? 1);
    const dense = rows
      .filter(
        (d) => d.role !== 'baseline' && !d.experts && d.m === r.m && d.n === r.n && d.k === r.k && ok(d),
      )
      .reduce<BenchRow | undefined>((a, d) => (!a || d.ms! < a.ms! ? d : a), undefined);
    const ways = t
      .filter((x) => x.experts === r.experts && x.tokens === tokens && x.check?.pass !== false)
      .map((x) => `torch ${x.way} ${fmt(x.ms, 4)} ms (ours / torch ${fmt(r.ms! / x.ms, 2)})`);
    return (
      `MOE ${key} (experts x tokens, top-${r.topk}, ${r.n}x${r.k}): ours ${fmt(r.ms, 4)} ms (${r.id})` +
      (dense
        ? `; dense plan at m = ${r.m} ${fmt(dense.ms, 4)} ms (ours / dense ${fmt(r.ms! / dense.ms!, 2)})`
        : '') +
      (ways.length ? `; ${ways.join('; ')}` : '')
    );
  });
}

/** The family with its main pass's WGSL rewritten by `mutate` (the bench's wrong-kernel test hook). */
function withMutation(family: KernelFamily, mutate: BenchOptions['mutateWgsl']): KernelFamily {
  if (!mutate) return family;
  return {
    ...family,
    build(c, caps) {
      const b = family.build(c, caps);
      const main = b.plan.passes[b.plan.mainPass]!;
      const passes = [...b.plan.passes];
      passes[b.plan.mainPass] = {
        ...main,
        wgsl: mutate(`${family.id}/${c.arm}/${configName(c)}`, main.wgsl),
      };
      return { ...b, plan: { ...b.plan, passes } };
    },
  };
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The (wm, wn, rm, rn) part of a tile name, without staging suffixes. */
const baseTile = (tile: string) => tile.split(',').slice(0, 4).join(',');

/** Same-run ratios: (a) vs the best f32 baseline tile, (b) vs the scalar arm, (c) tuned vs incumbent. */
function deriveRatios(rows: BenchRow[]) {
  const key = (r: BenchRow) => `${r.m}x${r.n}x${r.k}/${r.experts ?? 0}`;
  const ok = (r: BenchRow) => r.ms !== undefined && r.correctness?.pass;
  const bestF32 = new Map<string, number>();
  for (const r of rows)
    if (r.role === 'baseline' && ok(r)) bestF32.set(key(r), Math.min(bestF32.get(key(r)) ?? Infinity, r.ms!));
  for (const r of rows) {
    if (!ok(r)) continue;
    const f = bestF32.get(key(r));
    if (f !== undefined && r.role !== 'baseline') r.vsF32 = f / r.ms!;
    if (r.arm !== 'scalar') {
      const s =
        rows.find(
          (o) =>
            ok(o) && o.family === r.family && o.tile === r.tile && o.arm === 'scalar' && key(o) === key(r),
        ) ??
        rows.find(
          (o) =>
            ok(o) &&
            o.family === r.family &&
            baseTile(o.tile) === baseTile(r.tile) &&
            o.arm === 'scalar' &&
            key(o) === key(r),
        );
      if (s) r.vsScalar = s.ms! / r.ms!;
    }
    if (r.role === 'tuned') {
      const inc = rows.find(
        (o) =>
          ok(o) && o.family === r.family && o.arm === r.arm && o.role === 'incumbent' && key(o) === key(r),
      );
      if (inc) r.vsIncumbent = inc.ms! / r.ms!;
    }
  }
}

/** What the bench reads of a torch_baseline.py JSON (ms_call only in files from 2026-12-04 on). */
interface TorchJson {
  int_mm?: { m: number; n: number; k: number; layout?: string; ms: number; tops: number; ms_call?: number }[];
  f16_mm?: { m: number; n: number; k: number; ms: number; tflops: number; ms_call?: number }[];
}

const withCall = (ms: number | undefined) => (ms === undefined ? {} : { msCall: ms });

/** Ours, not a baseline: the rows a shape's best plan and its ratios are about. */
const ours = (r: BenchRow) => r.role !== 'baseline';

/** The headline at `shape` from a run's rows and its torch JSON (bench/report.ts recomputes it from files). */
export function headline(result: Pick<BenchResult, 'rows' | 'torch'>, shape: Shape): Headline {
  const at = result.rows.filter(
    (r) =>
      r.m === shape.m &&
      r.n === shape.n &&
      r.k === shape.k &&
      !r.experts &&
      r.ms !== undefined &&
      r.correctness?.pass,
  );
  const best = (rows: BenchRow[]) =>
    rows.reduce<BenchRow | undefined>((b, r) => (!b || r.ms! < b.ms! ? r : b), undefined);
  const int8 = best(at.filter((r) => ours(r) && r.arithmetic === 'int8'));
  const any = best(at.filter(ours));
  const h: Headline = { shape };
  if (int8) h.bestInt8 = { id: int8.id, ms: int8.ms!, tops: int8.tops! };
  if (any) h.bestAny = { id: any.id, ms: any.ms!, tops: any.tops! };
  const torch = (result.torch as TorchJson | undefined)?.int_mm?.filter(
    (t) => t.m === shape.m && t.n === shape.n && t.k === shape.k,
  );
  if (torch?.length) {
    h.torchIntMm = torch.map((t) => ({
      layout: t.layout ?? 'kn',
      ms: t.ms,
      tops: t.tops,
      ...withCall(t.ms_call),
    }));
    const fastest = Math.min(...torch.map((t) => t.ms));
    if (int8) h.ratioInt8 = fastest / int8.ms!;
    if (any) h.ratioAny = fastest / any.ms!;
    h.goalMs = 2 * fastest;
  }
  const f16 = (result.torch as TorchJson | undefined)?.f16_mm?.find(
    (t) => t.m === shape.m && t.n === shape.n && t.k === shape.k,
  );
  if (f16) h.torchF16Mm = { ms: f16.ms, tflops: f16.tflops, ...withCall(f16.ms_call) };
  const passes = any?.passMs;
  if (passes && passes.length > 1) {
    h.gemmPassMs = passes.at(-1)!;
    if (h.goalMs !== undefined) h.goalGemmPassMs = h.goalMs - (any!.ms! - h.gemmPassMs);
  }
  return h;
}

/**
 * The headline as the bench prints it and bench/report.ts renders it: the best int8 MMQ and the best
 * quantized GEMM against torch, and both against torch's f16 matmul for scale.
 */
export function headlineLines(h: Headline): string[] {
  const s = `${h.shape.m}x${h.shape.n}x${h.shape.k}`;
  const lines: string[] = [];
  if (h.bestInt8)
    lines.push(
      `best WebGPU int8 MMQ at ${s}: ${h.bestInt8.id} ${fmt(h.bestInt8.ms, 4)} ms ${fmt(h.bestInt8.tops, 1)} TOPS`,
    );
  if (h.bestAny)
    lines.push(
      `best WebGPU quantized GEMM at ${s}: ${h.bestAny.id} ${fmt(h.bestAny.ms, 4)} ms ${fmt(h.bestAny.tops, 1)} TOPS` +
        (h.gemmPassMs !== undefined ? ` (its GEMM pass ${fmt(h.gemmPassMs, 4)} ms)` : ''),
    );
  const oneAtATime = (ms: number | undefined) =>
    ms === undefined ? '' : ` (one call at a time: ${fmt(ms, 4)} ms)`;
  for (const t of h.torchIntMm ?? [])
    lines.push(
      `torch._int_mm at ${s} (B layout ${t.layout}): ${fmt(t.ms, 4)} ms ${fmt(t.tops, 1)} TOPS${oneAtATime(t.msCall)}`,
    );
  if (h.ratioInt8 !== undefined)
    lines.push(
      `RATIO best WebGPU int8 MMQ / torch._int_mm (fastest layout) = ${fmt(h.ratioInt8, 3)} (goal >= 0.5)`,
    );
  if (h.ratioAny !== undefined)
    lines.push(`RATIO best WebGPU quantized GEMM (any arm) / torch._int_mm = ${fmt(h.ratioAny, 3)}`);
  if (h.goalMs !== undefined && h.bestAny)
    lines.push(
      `GOAL 0.5x torch._int_mm needs the best plan at <= ${fmt(h.goalMs, 4)} ms (now ${fmt(h.bestAny.ms, 4)})` +
        (h.goalGemmPassMs !== undefined
          ? `: its GEMM pass at <= ${fmt(h.goalGemmPassMs, 4)} ms (now ${fmt(h.gemmPassMs, 4)}) next to its other passes`
          : ''),
    );
  const f16 = h.torchF16Mm;
  if (f16) {
    const x = (ms: number | undefined) => (ms === undefined ? undefined : ms / f16.ms);
    lines.push(
      `torch f16 matmul at ${s}: ${fmt(f16.ms, 4)} ms ${fmt(f16.tflops, 1)} TFLOP/s${oneAtATime(f16.msCall)}` +
        (h.bestAny ? `; best plan ${fmt(x(h.bestAny.ms))}x it` : '') +
        (h.gemmPassMs !== undefined ? `, its GEMM pass ${fmt(x(h.gemmPassMs))}x` : '') +
        (h.goalGemmPassMs !== undefined ? `, the goal's GEMM pass ${fmt(x(h.goalGemmPassMs))}x` : ''),
    );
  }
  return lines;
}

/** A number to `d` decimals, '-' when missing or not finite (the bench's and its reports' tables). */
export const fmt = (v: number | undefined, d = 2) =>
  v === undefined || !Number.isFinite(v) ? '-' : v.toFixed(d);

function rowLine(r: BenchRow): string {
  const shape = rowShape(r);
  if (r.skipped) return `  skip  ${r.id.padEnd(44)} ${shape.padEnd(18)} ${r.skipped.slice(0, 160)}`;
  if (r.error) return `  ERROR ${r.id.padEnd(44)} ${shape.padEnd(18)} ${r.error.slice(0, 300)}`;
  const c = r.correctness;
  const verdict = c
    ? c.pass
      ? 'ok'
      : `WRONG rel ${c.relToMax.toExponential(1)}${c.allWritten ? '' : ' unwritten'}`
    : '?';
  const passes =
    r.passMs && r.passMs.length > 1 ? ` (passes alone ${r.passMs.map((p) => fmt(p, 4)).join(' + ')})` : '';
  return `  ${verdict.padEnd(5)} ${r.id.padEnd(44)} ${shape.padEnd(18)} ${fmt(r.ms, 4).padStart(9)} ms ${fmt(r.tops, 1).padStart(7)} TOPS ${fmt(r.weightGBs, 0).padStart(6)} GB/s${r.peakFraction !== undefined ? ` ${fmt(100 * r.peakFraction, 1)}% peak` : ''}${passes}`;
}

/** The final table: one line per measured row, then tuning and the headline. */
export function table(result: BenchResult): string[] {
  const lines: string[] = [''];
  lines.push(
    `adapter: ${result.adapter.vendor} ${result.adapter.description} plane ${result.adapter.plane}${result.quick ? ' (QUICK: harness check, not speed)' : ''}`,
  );
  if (result.peak) lines.push(`peak: ${result.peak.source}`);
  lines.push(
    'family/arm/config                             shape              ms/run   TOPS   wGB/s  %peak  xF32  xScalar xIncumb  check',
  );
  for (const r of result.rows) {
    if (r.ms === undefined) continue;
    const c = r.correctness;
    lines.push(
      `${r.id.padEnd(45)} ${rowShape(r).padEnd(18)} ${fmt(r.ms, 4).padStart(9)} ${fmt(r.tops, 1).padStart(6)} ${fmt(r.weightGBs, 0).padStart(7)} ${(r.peakFraction !== undefined ? fmt(100 * r.peakFraction, 1) : '-').padStart(6)} ${fmt(r.vsF32).padStart(5)} ${fmt(r.vsScalar).padStart(8)} ${fmt(r.vsIncumbent).padStart(7)}  ${c?.pass ? 'ok' : 'WRONG'} ${c ? c.relToMax.toExponential(1) : ''}`,
    );
  }
  const failed = result.rows.filter((r) => r.error || (r.correctness && !r.correctness.pass));
  if (failed.length)
    lines.push(
      `${failed.length} config(s) FAILED (error or wrong result): ${failed.map((r) => `${r.id}@${rowShape(r)}`).join(', ')}`,
    );
  for (const t of result.tuning)
    lines.push(
      `tuned ${t.family} at ${t.shape.m}x${t.shape.n}x${t.shape.k}: ${t.winner ?? 'none'} (${t.evaluated} evaluated, ${t.failedGate} failed gate, ${t.rejected} rejected)`,
    );
  if (result.headline) lines.push(...headlineLines(result.headline));
  return lines;
}
