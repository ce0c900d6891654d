// The bench harness, importable (test/bench.test.ts runs its quick mode in-process): every family at LLM
// prefill shapes through the same path the app and the tuner take -- each config built by its family,
// prepared and timed by the one runner (src/kernels/gpu/runner.ts) on inputs uploaded once with cold
// weight banks, gated against the family's oracle on sampled rows plus a check that every element was
// written -- and the ratios that must come from one run. See docs/benchmarks.md for the method.
// Its parts: ./cases.ts (what runs), ./measure.ts (sessions, timing, tuning), ./derive.ts (same-run
// ratios, the headline), ./format.ts (lines and tables), ./result.ts (the JSON's types).
import { gemmF32BaselineFamily } from '../src/kernels/baseline';
import type { RunConfig } from '../src/kernels/family';
import { clockWarmMs } from '../src/kernels/gpu/timing';
import { shapeParams } from '../src/kernels/models';
import {
  baselineCandidates,
  benchConfig,
  benchFamily,
  BENCHED,
  candidatesOf,
  denseShapes,
  isHeadline,
  moeCases,
  rowOf,
} from './cases';
import type { BenchGpu } from './dawn';
import { deriveRatios, headline } from './derive';
import { moeRatioLines, rowShape, table } from './format';
import { benchProblem, peakOf, tuneAt, type BenchRun } from './measure';
import type { BenchResult, BenchRow, MoeCase, Shape } from './result';

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

/** The run's context and its empty result: adapter, peak, timing settings, filter and log. */
function startBench(gpu: BenchGpu, opts: BenchOptions): BenchRun {
  const { caps, device } = gpu;
  const peak = peakOf(gpu);
  const result: BenchResult = {
    date: new Date().toISOString(),
    quick: opts.quick,
    adapter: {
      vendor: caps.vendor,
      architecture: caps.architecture,
      description: caps.description,
      plane: caps.subgroups ? caps.subgroupMaxSize : 32,
      features: caps.features,
    },
    dawnFlags: gpu.flags,
    ...(peak ? { peak } : {}),
    rows: [],
    tuning: [],
    ...(opts.torch ? { torch: opts.torch } : {}),
  };
  return {
    device,
    caps,
    result,
    quick: opts.quick,
    tune: opts.tune,
    ...(peak ? { peak } : {}),
    l2: peak?.l2Bytes ?? 8 * 1024 * 1024,
    warmMs: opts.quick ? 0 : clockWarmMs(caps),
    timing: { targetMs: opts.targetMs, batches: opts.reps, passes: true },
    sweeps: Math.max(1, Math.floor(opts.sweeps ?? 1)),
    want: (id) => !opts.filter || opts.filter.test(id),
    log: opts.log ?? (() => {}),
    ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
    ...(opts.mutateWgsl ? { mutateWgsl: opts.mutateWgsl } : {}),
  };
}

/**
 * One dense shape: every dense family on each arm at its incumbent, its seeds and (where tuned here) its
 * tuned winner, then the f32 baseline's tiles. Passing configs are kept by row id in `passing`.
 */
async function benchDenseShape(
  bench: BenchRun,
  shape: Shape,
  tuneHere: boolean,
  passing: Map<string, RunConfig>,
): Promise<void> {
  const { caps, quick } = bench;
  const { m, n, k } = shape;
  bench.log(`\n== ${m} x ${n} x ${k} ==`);
  for (const f of BENCHED.filter((x) => !x.takes!.bank)) {
    const { base, list } = candidatesOf(caps, quick, f, shapeParams(f, f.defaults, { n, k, rows: m }));
    // A family that does not take this shape (the decode matvec past its rows) says so in one row.
    const refused = f.validate(base, caps);
    if (refused.length) {
      const row = rowOf(f, shape)(base, 'incumbent');
      if (bench.want(`${row.id}@${rowShape(row)}`))
        bench.result.rows.push({ ...row, skipped: refused.join('; ') });
      continue;
    }
    const won = tuneHere && f.search ? await tuneAt(bench, f, base, shape) : undefined;
    const tuned = won ? [{ config: won, role: 'tuned' }] : [];
    await benchProblem(bench, f, base, [...list, ...tuned], rowOf(f, shape), passing);
  }
  const b = gemmF32BaselineFamily;
  const base = benchConfig(caps, b.id, { m, n, k });
  await benchProblem(bench, b, base, baselineCandidates(caps, quick, shape), rowOf(b, shape));
}

/**
 * One MoE case: every bank family (routes, arms, seeds, tuned where asked) and, with `yardstick`, that
 * dense config rerun at m = slots (one weight, not a bank).
 */
async function benchMoeCase(
  bench: BenchRun,
  c: MoeCase,
  tuneHere: boolean,
  yardstick: RunConfig | undefined,
): Promise<void> {
  const slots = c.tokens * c.topk;
  const shape = { m: slots, n: c.n, k: c.k, experts: c.experts, topk: c.topk };
  for (const f of BENCHED.filter((x) => x.takes!.bank)) {
    const params = shapeParams(f, f.defaults, {
      n: c.n,
      k: c.k,
      rows: c.tokens,
      experts: c.experts,
      topk: c.topk,
    });
    const { base, list } = candidatesOf(bench.caps, bench.quick, f, params);
    const won = tuneHere ? await tuneAt(bench, f, base, { m: slots, n: c.n, k: c.k }) : undefined;
    const tuned = won ? [{ config: won, role: 'tuned' }] : [];
    await benchProblem(bench, f, base, [...list, ...tuned], rowOf(f, shape));
  }
  if (yardstick) {
    const f = benchFamily(yardstick.kernel);
    const at = { ...yardstick, params: shapeParams(f, yardstick.params, { n: c.n, k: c.k, rows: slots }) };
    await benchProblem(bench, f, at, [{ config: at, role: 'fixed' }], rowOf(f, { m: slots, n: c.n, k: c.k }));
  }
}

/** The fastest passing dense config of ours at `head` (the MoE cases' yardstick). */
function fastestAt(rows: readonly BenchRow[], head: Shape, passing: Map<string, RunConfig>) {
  const best = rows
    .filter((r) => r.role !== 'baseline' && !r.experts && r.m === head.m && r.n === head.n && r.k === head.k)
    .filter((r) => r.ms !== undefined && r.correctness?.pass && passing.has(r.id))
    .reduce<BenchRow | undefined>((a, r) => (!a || r.ms! < a.ms! ? r : a), undefined);
  return best && passing.get(best.id);
}

/**
 * Run the bench on an open GPU. Returns every row (measured, skipped or failed), the tuning summaries and
 * the headline ratio; `opts.log` receives progress and the final table.
 * @example const r = await runBench(gpu, { quick: true, tune: true, moe: true, reps: 1, targetMs: 1 });
 */
export async function runBench(gpu: BenchGpu, opts: BenchOptions): Promise<BenchResult> {
  const bench = startBench(gpu, opts);
  const { result } = bench;
  const shapes = opts.shapes ?? denseShapes(opts.quick);
  const head = shapes.find(isHeadline) ?? shapes[0]!;
  const same = (a: Shape) => (b: Shape) => a.m === b.m && a.n === b.n && a.k === b.k;
  /** Passing configs by row id (the MoE yardstick reruns the headline's fastest dense one). */
  const passing = new Map<string, RunConfig>();
  for (const shape of opts.dense === false ? [] : [head, ...shapes.filter((s) => s !== head)]) {
    const tuneHere = shape === head || !!opts.tuneEveryShape || !!opts.tuneShapes?.some(same(shape));
    await benchDenseShape(bench, shape, tuneHere, passing);
  }
  if (opts.moe) {
    const yardstick = opts.moeDense && !opts.quick ? fastestAt(result.rows, head, passing) : undefined;
    for (const c of opts.moeCases ?? moeCases(opts.quick)) {
      const tuneHere = !!opts.moeTune?.some((t) => t.experts === c.experts && t.tokens === c.tokens);
      await benchMoeCase(bench, c, tuneHere, yardstick);
    }
  }
  deriveRatios(result.rows);
  result.headline = headline(result, head);
  for (const line of table(result)) bench.log(line);
  for (const line of moeRatioLines(result.rows, opts.torch)) bench.log(line);
  return result;
}
