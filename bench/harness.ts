// The bench harness, importable (test/bench.test.ts runs its quick mode in-process): build every
// benched config from the kernel generators, gate it against a sampled oracle, time it on resident
// buffers with cold weight banks, and derive the ratios that must come from one run.
import { judge } from '../src/kernels/compare';
import type { CoopmatStaging, TileParams } from '../src/kernels/family';
import { int8ArmSupport, planeWidth, type AdapterCaps, type Arm } from '../src/kernels/gpu/caps';
import { suffixedPass } from '../src/kernels/gpu/instrument';
import type { BufferSpec, PassSpec } from '../src/kernels/gpu/plan';
import {
  buildMmqKernel,
  mmqCapsProblems,
  mmqDimsData,
  mmqInputBuffers,
  mmqPass,
  mmqPresetSpec,
  mmqQ8Element,
  mmqShapeProblems,
  mmqSpecProblems,
  mmqWeightBytes,
  mmqWorkgroupBytes,
  type MmqInputs,
  type MmqSpec,
} from '../src/kernels/mmq';
import {
  coopmatStagingSpec,
  defaultCoopmatStaging,
  coopmatMatrixUnsupported,
  coopmatPlan,
  coopmatSpecErrors,
  coopmatWorkgroupBytes,
  coopmatSplitExtents,
  coopmatXhRows,
  SPLIT_SLACK_BYTES,
  SPLIT_STAGE_DEFAULT,
  type CoopmatArm,
  type SplitStage,
  type CoopmatSpec,
} from '../src/kernels/coopmat';
import {
  buildGemmF32Kernel,
  GEMM_F32_DEFAULT_TILE,
  GEMM_F32_SMALL_TILE,
  gemmF32Dims,
  gemmF32RefAt,
  gemmF32ShapeProblems,
  type GemmF32Tile,
} from '../src/kernels/baseline';
import {
  buildMoePlan,
  MOE_ROUTING_SEED,
  moeAllProblems,
  moeRouting,
  type MoeProblem,
} from '../src/kernels/moe';
import {
  choiceOf,
  Evolution,
  finalsWallMs,
  mmqQ4kIncumbent,
  coopmatTileSpace,
  mmqQ4kSpace,
  tileLimits,
  huntSeeds,
  tileStaticCheck,
  type Config,
  type Evaluator,
  type FinalTiming,
  type Measurement,
  type Space,
  type StaticVerdict,
  type TileChoice,
} from '../src/kernels/tune';
import { dequantizeQ4K } from '../src/kernels/quant/q4k';
import type { MmqQ4kData, MmqQ8Data } from '../src/kernels/quant/gen';
import type { BenchGpu } from './dawn';
import { fastQ4kData, fastQ8Data } from './data';
import { CLOCK_WARM_MS } from '../src/kernels/gpu/run';
import {
  banksFor,
  makeResident,
  preparePasses,
  runOnce,
  timeMainPass,
  type PreparedPasses,
  type Resident,
  type Timing,
} from './exec';
import { f16Element, q4kElement, sampleIndices } from './oracle';

/**
 * A `--shapes` list: "m,n,k;m,n,k". Throws on a malformed entry.
 * @example parseShapes('2048,4096,4096;32,11008,4096')
 */
export function parseShapes(list: string): Shape[] {
  return list.split(';').map((s) => {
    const [m, n, k] = s.split(',').map(Number);
    if (!m || !n || !k) throw new Error(`--shapes: bad shape "${s}" (want m,n,k)`);
    return { m, n, k };
  });
}

export interface Shape {
  m: number;
  n: number;
  k: number;
}

export interface BenchOptions {
  quick: boolean;
  tune: boolean;
  /** Tune coopmat-f16 (tile and staging) at every shape, not only the headline shape. */
  tuneEveryShape?: boolean;
  moe: boolean;
  reps: number;
  targetMs: number;
  /**
   * Times each passing row is timed, in sweeps over one problem's rows (the second in reverse order, after
   * the last row of the first): the row keeps the fastest sweep. Default 1. On the H200 a slow phase
   * outlasted whole rows with all their batches agreeing (docs/benchmarks.md, Follow-up 14), which no
   * count of batches inside one window sees past; a later window can.
   */
  sweeps?: number;
  filter?: RegExp;
  shapes?: Shape[];
  /** torch_baseline.py output from the same machine. */
  torch?: unknown;
  log?: (line: string) => void;
  /** Called after every row with the result so far (the CLI checkpoints its JSON: a crash keeps the rows). */
  onProgress?: (partial: BenchResult) => void;
  /** Test hook: rewrite a candidate's main-pass WGSL before it runs (proves a wrong kernel is flagged). */
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
  /** 'q4': ONNX Runtime's MatMulNBits rows (bench/ort.ts), 4-bit codes with one scale per 32 weights. */
  weights: 'q8_0' | 'q4k' | 'f32' | 'q4';
  arm: string;
  /** 'incumbent' | 'tuned' | 'fixed' (a seed kernel with its own tile) | 'baseline'. */
  role: string;
  tile: string;
  m: number;
  n: number;
  k: number;
  experts?: number;
  topk?: number;
  ms?: number;
  msSamples?: number[];
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
  /** ms of each timed pass when a config takes several (their sum is `ms`), e.g. [pre-pass, GEMM]. */
  passMs?: number[];
  /** With sweeps > 1: each sweep's ms, in the order timed; `ms` (and the batches, passes and window) is the
   * fastest sweep's. */
  msSweeps?: number[];
  /** When its timing (the clock warm-up, then every timed pass) began and finished (ISO 8601): the window
   * to line up with the clock log (bench/h200.sh smi.csv). */
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
  /** The finalists' longer re-timings (Evolution's finals); the winner is the fastest of them. */
  finals?: FinalTiming[];
}

export interface Headline {
  shape: Shape;
  bestInt8?: { id: string; ms: number; tops: number };
  bestAny?: { id: string; ms: number; tops: number };
  /**
   * torch._int_mm per layout. ms: timed as the bench times a row (torch_baseline.py since 2026-12-04);
   * msCall: one call at a time, each charged a launch (every torch `ms` before that date was this).
   */
  torchIntMm?: { layout: string; ms: number; tops: number; msCall?: number }[];
  /** torch._int_mm ms (its fastest layout) / best WebGPU int8 MMQ ms: >= 0.5 is the issue's goal. */
  ratioInt8?: number;
  ratioAny?: number;
  /** torch's f16 matmul at the shape (torch_baseline.py), for scale: cuBLAS on f16 operands, same card. */
  torchF16Mm?: { ms: number; tflops: number; msCall?: number };
  /** What the best plan may take for 0.5 x torch._int_mm (its fastest layout): twice torch's time. */
  goalMs?: number;
  /** The best plan's last pass (its GEMM) when it has several passes. */
  gemmPassMs?: number;
  /** What that pass may take for goalMs next to the plan's other passes as measured. */
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

const tileStr = (t: TileParams) => `${t.wm},${t.wn},${t.rm},${t.rn}`;
const gemmTileStr = (t: GemmF32Tile) => `${t.bm}x${t.bn}x${t.bk}/${t.tm}x${t.tn}`;

/** A benched kernel on a problem: the passes to run (the last one timed unless `mainPass` says). */
interface Candidate {
  row: BenchRow;
  passes: PassSpec[];
  mainPass: number;
  /** Passes whose times add up to the reported ms (default: the main pass alone). */
  timed?: number[];
  output: string;
  /** Oracle values at the sampled flat output indices. */
  oracle: (idx: Uint32Array) => Float32Array;
  tol: number;
  ops: number;
  weightBytes: number;
  kind: 'int8' | 'f16' | 'f32';
}

/** One problem's inputs, resident on the GPU, shared by every candidate benched on it. */
interface Problem {
  key: string;
  resident: Resident;
  idx: Uint32Array;
}

type Log = (s: string) => void;

type TimeOpts = { reps: number; targetMs: number; maxIters: number; warmMs: number };

/** One timing of a candidate: every pass it is charged, each in its own batches, and the window. */
interface CandidateTiming extends Timing {
  passMs?: number[];
  timedFrom: string;
  at: string;
}

async function timeCandidate(
  prob: Problem,
  c: Candidate,
  prepared: PreparedPasses,
  opts: TimeOpts,
): Promise<CandidateTiming> {
  const timedFrom = new Date().toISOString();
  const t = await timeMainPass(prob.resident, c.passes[c.mainPass]!, prepared, c.mainPass, opts);
  // A multi-pass config is charged every pass it needs, each timed in its own batches.
  const timed = c.timed ?? [c.mainPass];
  let passMs: number[] | undefined;
  if (timed.length > 1) {
    passMs = [];
    for (const i of timed)
      passMs.push(
        i === c.mainPass ? t.ms : (await timeMainPass(prob.resident, c.passes[i]!, prepared, i, opts)).ms,
      );
    t.ms = passMs.reduce((a, b) => a + b, 0);
  }
  return { ...t, ...(passMs ? { passMs } : {}), timedFrom, at: new Date().toISOString() };
}

/** Set a row's time and what follows from it (TOPS, GB/s, fraction of peak) from one timing. */
function applyTiming(row: BenchRow, c: Candidate, t: CandidateTiming, peak: Peak | undefined) {
  row.ms = t.ms;
  if (t.passMs) row.passMs = t.passMs;
  row.timedFrom = t.timedFrom;
  row.at = t.at;
  row.msSamples = t.samples;
  row.iters = t.iters;
  row.timing = t.timing;
  row.tops = c.ops / (t.ms * 1e-3) / 1e12;
  row.weightGBs = c.weightBytes / (t.ms * 1e-3) / 1e9;
  if (peak) {
    const rate = c.kind === 'int8' ? peak.int8Tops : c.kind === 'f16' ? peak.f16Tflops : peak.f32Tflops;
    row.peakFraction = row.tops / rate;
  }
}

/** A gated, timed row and what a later sweep needs to time it again (absent when it failed or errored). */
interface GatedRow {
  row: BenchRow;
  again?: { c: Candidate; prepared: PreparedPasses };
}

async function gateAndTime(
  gpu: BenchGpu,
  prob: Problem,
  c: Candidate,
  opts: TimeOpts,
  peak: Peak | undefined,
): Promise<GatedRow> {
  const row = c.row;
  try {
    const prepared = await preparePasses(prob.resident, c.passes);
    const out = await runOnce(prob.resident, c.passes, prepared, c.output);
    let allWritten = true;
    for (let i = 0; i < out.length; i++) {
      if (Number.isNaN(out[i]!)) {
        allWritten = false;
        break;
      }
    }
    const got = new Float32Array(prob.idx.length);
    prob.idx.forEach((v, i) => (got[i] = out[v]!));
    const want = c.oracle(prob.idx);
    const v = judge(got, want, { kind: 'rel-to-max', tol: c.tol });
    row.correctness = {
      pass: v.pass && allWritten,
      relToMax: v.relToMax,
      samples: prob.idx.length,
      allWritten,
      tol: c.tol,
    };
    applyTiming(row, c, await timeCandidate(prob, c, prepared, opts), peak);
    return row.correctness.pass ? { row, again: { c, prepared } } : { row };
  } catch (e) {
    row.error = e instanceof Error ? e.message.slice(0, 2000) : String(e);
  }
  return { row };
}

/**
 * Time again, once per extra sweep, every row gated on one problem, in reverse order (so a row's sweeps
 * are as far apart as the problem's other rows make them); each row keeps its fastest sweep.
 */
async function resweep(
  prob: Problem,
  rows: readonly GatedRow[],
  sweeps: number,
  opts: TimeOpts,
  peak: Peak | undefined,
  log: Log,
) {
  for (let sweep = 2; sweep <= sweeps; sweep++)
    for (const { row, again } of [...rows].reverse()) {
      if (!again || row.ms === undefined) continue;
      const before = row.ms;
      const t = await timeCandidate(prob, again.c, again.prepared, opts);
      row.msSweeps = [...(row.msSweeps ?? [before]), t.ms];
      if (t.ms < before) applyTiming(row, again.c, t, peak);
      log(
        `[sweep ${sweep}] ${row.id} ${row.m}x${row.n}x${row.k}: ${fmt(t.ms, 4)} ms (kept ${fmt(row.ms, 4)})`,
      );
    }
}

/** A row's shape as the tables print it: "MxNxK", and " eE" for an MoE row over E experts. */
export const rowShape = (r: BenchRow): string => `${r.m}x${r.n}x${r.k}${r.experts ? ` e${r.experts}` : ''}`;

/** The row of a benched config, identified as family/arm/tile unless `id` says otherwise. */
function benchRow(
  family: string,
  weights: BenchRow['weights'],
  arm: string,
  role: string,
  tile: string,
  { m, n, k }: Shape,
  id = `${family}/${arm}/${tile}`,
): BenchRow {
  return { id, family, weights, arm, role, tile, m, n, k };
}

/** An oracle at sampled flat indices of an [*, n] output, from the value at (row, col). */
function sampledOracle(n: number, at: (row: number, col: number) => number): Candidate['oracle'] {
  return (idx) => Float32Array.from(idx, (v) => at(Math.floor(v / n), v % n));
}

/** The candidate of one pass writing `out` [m, n] (2*m*n*k operations). */
function singlePassCandidate(
  row: BenchRow,
  pass: PassSpec,
  { m, n, k }: Shape,
  c: Pick<Candidate, 'oracle' | 'tol' | 'weightBytes' | 'kind'>,
): Candidate {
  return { row, passes: [pass], mainPass: 0, output: 'out', ops: 2 * m * n * k, ...c };
}

function skippedRow(row: BenchRow, why: string[]): BenchRow {
  return { ...row, skipped: why.join('; ') };
}

// ---------------------------------------------------------------------------------------- candidates

function mmqCandidate(
  caps: AdapterCaps,
  shape: Shape,
  spec: MmqSpec,
  family: string,
  role: string,
  data: MmqQ8Data | MmqQ4kData,
): Candidate | BenchRow {
  const { m, n, k } = shape;
  const row = benchRow(family, spec.weights, spec.arm, role, tileStr(spec.tile), shape);
  const why = [
    ...mmqSpecProblems(spec),
    ...mmqCapsProblems(spec, caps, { instrumented: false }),
    ...mmqShapeProblems(spec, m, n, k),
  ];
  if (why.length) return skippedRow(row, why);
  const kern = buildMmqKernel(spec);
  const pass = mmqPass(kern, kern.workgroups(m, n), false, row.id);
  const oracle =
    spec.weights === 'q8_0'
      ? sampledOracle(n, (i, j) => mmqQ8Element(data as MmqQ8Data, i, j, k))
      : sampledOracle(n, (i, j) => q4kElement(data as MmqQ4kData, i, j, k));
  // int8 sums are exact; only the f32 accumulation order may differ from the oracle's.
  return singlePassCandidate(row, pass, shape, {
    oracle,
    tol: 1e-5,
    weightBytes: mmqWeightBytes(spec.weights, n, k),
    kind: 'int8',
  });
}

/**
 * The coopmat spec the bench runs for a tile: the family's default staging on that arm
 * (coopmatStagingSpec(defaultCoopmatStaging(arm))) unless `staging` says otherwise. The tuner's static tier sizes tiles with it too.
 */
function coopmatBenchSpec(
  caps: AdapterCaps,
  { m, n, k }: Shape,
  tile: TileParams,
  arm: CoopmatArm,
  staging: SpecStaging = coopmatStagingSpec(defaultCoopmatStaging(arm)),
): CoopmatSpec {
  const { kStage = 1, rowPad = 0, pipeline = false, aDirect = false, split = false, splitStage } = staging;
  return {
    m,
    n,
    k,
    tile,
    plane: planeWidth(caps),
    arm,
    f16: caps.shaderF16 ? 'native' : 'emulated',
    ...(kStage === 1 ? {} : { kStage }),
    ...(rowPad ? { rowPad } : {}),
    ...(pipeline ? { pipeline } : {}),
    ...(aDirect ? { aDirect } : {}),
    ...(split ? { split } : {}),
    ...(splitStage ? { splitStage } : {}),
  };
}

/**
 * A coopmat tile's name: the tile, then any non-default staging ("4,4,2,2,ks2,pad8,pipe,adir"; the split
 * plan's staging as "split-shared-tiles-k16-b2" when it is not the default).
 */
function coopmatTileName(spec: CoopmatSpec): string {
  const { kStage = 1, rowPad = 0, splitStage: st } = spec;
  const split = st
    ? `,split-${st.a}-${st.b}-k${st.k}-b${st.buffers}${st.pre === 'fused' ? '-fused' : ''}`
    : ',split';
  return `${tileStr(spec.tile)}${kStage === 1 ? '' : `,ks${kStage}`}${rowPad ? `,pad${rowPad}` : ''}${spec.pipeline ? ',pipe' : ''}${spec.aDirect ? ',adir' : ''}${spec.split ? split : ''}`;
}

function coopmatCandidate(
  caps: AdapterCaps,
  shape: Shape,
  tile: TileParams,
  arm: CoopmatArm,
  role: string,
  x: Float32Array,
  data: MmqQ4kData,
  staging?: SpecStaging,
): Candidate | BenchRow {
  const { m, n, k } = shape;
  const spec = coopmatBenchSpec(caps, shape, tile, arm, staging);
  const row = benchRow('coopmat-f16', 'q4k', arm, role, coopmatTileName(spec), shape);
  const why = coopmatSpecErrors(spec);
  if (arm === 'subgroup-matrix') {
    const u = coopmatMatrixUnsupported(caps);
    if (u) why.push(u);
  }
  const bytes = coopmatWorkgroupBytes(spec);
  if (bytes > caps.limits.maxComputeWorkgroupStorageSize)
    why.push(`workgroup memory ${bytes} B > ${caps.limits.maxComputeWorkgroupStorageSize}`);
  const threads = tile.wm * tile.wn * spec.plane;
  if (threads > caps.limits.maxComputeInvocationsPerWorkgroup)
    why.push(`${threads} threads > ${caps.limits.maxComputeInvocationsPerWorkgroup}`);
  if (spec.aDirect && coopmatXhRows(spec) > XH_SCRATCH_ROWS(m)) why.push('xh scratch too small');
  if (spec.split) {
    const { mp, np } = coopmatSplitExtents(spec);
    if (mp > XH_SCRATCH_ROWS(m) || np > XH_SCRATCH_ROWS(n)) why.push('split scratch too small');
  }
  if (why.length) return skippedRow(row, why);
  // The family's own plan (one pass, or its pre-passes then the GEMM), every pass charged.
  const plan = coopmatPlan(spec, { x, w: data.w });
  return {
    row,
    passes: plan.passes,
    mainPass: plan.mainPass,
    timed: plan.passes.map((_, i) => i),
    output: 'out',
    ops: 2 * m * n * k,
    oracle: sampledOracle(n, (i, j) => f16Element(x, data, i, j, k)),
    // Operands are f16 (as in the oracle); the kernel sums in f32 in its own order.
    tol: 2e-3,
    weightBytes: mmqWeightBytes('q4k', n, k),
    kind: 'f16',
  };
}

function gemmCandidate(
  caps: AdapterCaps,
  shape: Shape,
  tile: GemmF32Tile,
  x: Float32Array,
  w: Float32Array,
): Candidate | BenchRow {
  const { m, n, k } = shape;
  const tileName = gemmTileStr(tile);
  const row = benchRow('gemm-f32', 'f32', 'f32', 'baseline', tileName, shape, `gemm-f32/${tileName}`);
  const why = gemmF32ShapeProblems(tile, m, n, k, caps.limits);
  if (why.length) return skippedRow(row, why);
  const kern = buildGemmF32Kernel(tile);
  return singlePassCandidate(row, suffixedPass(kern, kern.workgroups(m, n), row.id), shape, {
    oracle: (idx) => gemmF32RefAt(x, w, n, k, idx),
    tol: 1e-4,
    weightBytes: n * k * 4,
    kind: 'f32',
  });
}

// ----------------------------------------------------------------------------------------- problems

function mmqProblemBuffers(inputs: MmqInputs, shape: Shape, extra: BufferSpec[] = []): BufferSpec[] {
  return [
    ...mmqInputBuffers(inputs),
    { name: 'out', kind: 'storage', size: shape.m * shape.n * 4 },
    { name: 'dims', kind: 'uniform', data: mmqDimsData(shape.m, shape.n, shape.k) },
    ...extra,
  ];
}

const Q8_ROTATE = ['wq', 'wd'];
const Q4K_ROTATE = ['wqs', 'wsc', 'wd_dmin'];
// The f16 coopmat twin binds d and dmin as separate buffers (it is within the storage limit), the int8
// MMQ kernels as one interleaved `wd_dmin`: the shared Q4_K problem holds and rotates both layouts.
const COOPMAT_Q4K_ROTATE = ['wd', 'wdm'];
/**
 * Rows of the shared f16 scratch of the direct-A and split coopmat configs (covers a 512-row tile grid);
 * the split plan's weight scratch takes the same rounding of n.
 */
const XH_SCRATCH_ROWS = (m: number) => Math.ceil(m / 512) * 512;
/** Staging parameters of the coopmat generator that the bench varies (all default to today's kernel). */
type SpecStaging = Pick<CoopmatSpec, 'kStage' | 'rowPad' | 'pipeline' | 'aDirect' | 'split' | 'splitStage'>;
type StagedTile = [[number, number, number, number], SpecStaging];
/** Each tile under the split plan (rows padded by 8), with `splitStage` when it is not the default. */
const splitTiles = (tiles: StagedTile[0][], splitStage?: SplitStage): StagedTile[] =>
  tiles.map((t) => [t, { split: true, rowPad: 8, ...(splitStage ? { splitStage } : {}) }]);
// (wm, wn, rm, rn) and staging of the matrix arm: the tuned tile as it is, then padded rows, deeper
// stages and the pipelined staging on tiles whose f16 tiles plus the per-plane f32 spill fit 49152 bytes.
const COOPMAT_STAGING_TILES: StagedTile[] = [
  [[4, 4, 2, 4], {}], // the one-buffer kernel, as the matrix arm ran before the pipelined default
  [[4, 4, 2, 4], { rowPad: 8 }],
  [[4, 4, 2, 2], { rowPad: 8 }],
  [[2, 4, 2, 4], { rowPad: 8 }],
  [[4, 2, 2, 4], { rowPad: 8 }],
  [[4, 2, 2, 4], { kStage: 2, rowPad: 8 }],
  [[4, 4, 1, 2], { kStage: 2, rowPad: 8 }],
  [[2, 2, 2, 2], { kStage: 4, rowPad: 8 }],
  // Pipelined (register prefetch + double buffer): 128x128 and 64x128 blocks at 4, 8 and 16 planes.
  [[2, 4, 4, 2], { pipeline: true, rowPad: 8 }],
  [[4, 2, 2, 4], { pipeline: true, rowPad: 8 }],
  [[2, 2, 4, 4], { pipeline: true, rowPad: 8 }],
  [[2, 4, 2, 4], { pipeline: true, rowPad: 8 }],
  [[2, 2, 2, 4], { pipeline: true, rowPad: 8 }],
  [[2, 4, 4, 2], { pipeline: true }],
  [[2, 2, 4, 4], { pipeline: true }],
  // ... with A read from the f16 pre-pass copy (only B staged): up to 256x128 and 128x256 blocks.
  [[2, 4, 4, 2], { pipeline: true, rowPad: 8, aDirect: true }],
  [[4, 2, 2, 4], { pipeline: true, rowPad: 8, aDirect: true }],
  [[4, 2, 4, 4], { pipeline: true, rowPad: 8, aDirect: true }],
  [[4, 4, 4, 2], { pipeline: true, rowPad: 8, aDirect: true }],
  [[2, 4, 4, 4], { pipeline: true, rowPad: 8, aDirect: true }],
  [[8, 2, 2, 4], { pipeline: true, rowPad: 8, aDirect: true }],
  [[4, 2, 4, 2], { pipeline: true, rowPad: 8, aDirect: true }],
  [[2, 2, 4, 4], { pipeline: true, rowPad: 8, aDirect: true }],
  // The split plan (weight and activation pre-passes, then A fragments from global memory and B staged
  // from f16): 64x64 planes at 2..8 planes a block, and 32x128 planes (half of A's fragment loads per
  // product) at 4 and 8 planes.
  ...splitTiles([
    [1, 1, 4, 4],
    [2, 1, 4, 4],
    [4, 1, 4, 4],
    [2, 2, 4, 4],
    [4, 2, 4, 4],
    [2, 1, 4, 2],
    [4, 1, 2, 8],
    [8, 1, 2, 8],
    [2, 1, 8, 2],
    [8, 1, 2, 4],
    [2, 2, 1, 1],
    [2, 1, 1, 2],
  ]),
  // The split plan without the weight pre-pass: B decoded from the Q4_K words in the GEMM's stage. Each
  // weight is decoded once per block row (M / BM times: a few at small m) and read as Q4_K (4.5 bits)
  // instead of written and read back as f16: the 32- and 64-row tiles are for small m.
  ...splitTiles(
    [
      [4, 1, 4, 4],
      [8, 1, 2, 8],
      [2, 1, 4, 4],
      [4, 2, 4, 4],
      [2, 4, 1, 1],
      [2, 2, 1, 1],
      [2, 1, 1, 2],
      [2, 2, 2, 1],
      [4, 1, 1, 4],
      [8, 1, 2, 4],
    ],
    { ...SPLIT_STAGE_DEFAULT, b: 'q4k' },
  ),
  // The split plan with both pre-passes as one dispatch.
  ...splitTiles(
    [
      [4, 1, 4, 4],
      [8, 1, 2, 8],
    ],
    { ...SPLIT_STAGE_DEFAULT, pre: 'fused' },
  ),
  // The split plan with A shared by a block row's planes and B copied from fragment tiles: 1.8x slower
  // than 4,1,4,4 A-direct on the H200 (docs/benchmarks.md, "Follow-up 4"); kept as the reference point.
  [[2, 4, 4, 4], { split: true, rowPad: 8, splitStage: { a: 'shared', b: 'tiles', k: 32, buffers: 1 } }],
];
const tileOf4 = ([wm, wn, rm, rn]: [number, number, number, number]): TileParams => ({ wm, wn, rm, rn });

function dequantActivation(xq: Int8Array, xs: Float32Array, m: number, k: number): Float32Array {
  const x = new Float32Array(m * k);
  for (let i = 0; i < x.length; i++) x[i] = Math.fround(xq[i]! * xs[Math.floor(i / 32)]!);
  return x;
}

/** A tile-space evaluator over resident buffers, gated by the sampled oracle (C's Evolution drives it). */
class SampledTileEval implements Evaluator {
  constructor(
    private readonly gpu: BenchGpu,
    private readonly prob: Problem,
    private readonly make: (c: TileChoice) => Candidate | BenchRow,
    private readonly workgroupBytes: (c: TileChoice) => number,
    private readonly reps: number,
    /** Untimed clock warm-up before each measure (0 on SwiftShader-size runs). */
    private readonly warmMs: number,
    readonly space = mmqQ4kSpace(),
  ) {}

  staticCheck(cfg: Config): StaticVerdict {
    const choice = choiceOf(this.space, cfg);
    return tileStaticCheck(choice.tile, tileLimits(this.gpu.caps, planeWidth(this.gpu.caps)), () =>
      this.workgroupBytes(choice),
    );
  }

  async measure(cfg: Config, iters: number): Promise<Measurement> {
    const c = this.make(choiceOf(this.space, cfg));
    if (!('passes' in c)) throw new Error(c.skipped ?? 'not runnable');
    const { row: r } = await gateAndTime(
      this.gpu,
      this.prob,
      c,
      { reps: this.reps, targetMs: 0, maxIters: iters, warmMs: this.warmMs },
      undefined,
    );
    if (r.error) throw new Error(r.error);
    const rel = r.correctness?.relToMax ?? Infinity;
    if (!r.correctness?.pass)
      return {
        ms: Infinity,
        worstRel: rel,
        reason: `rel_to_max ${rel.toExponential(2)} or unwritten output`,
      };
    return {
      ms: r.ms!,
      worstRel: rel,
      ...(r.timing === 'timestamp' || r.timing === 'wall' ? { timing: r.timing } : {}),
    };
  }
}

// ----------------------------------------------------------------------------------------- the run

/**
 * Run the bench on an open GPU. Returns every row (measured, skipped or failed), the tuning summaries
 * and the headline ratio; `opts.log` receives progress and the final table.
 * @example const r = await runBench(gpu, { quick: true, tune: true, moe: true, reps: 1, targetMs: 0 });
 */
export async function runBench(gpu: BenchGpu, opts: BenchOptions): Promise<BenchResult> {
  const log: Log = opts.log ?? (() => {});
  const { caps, device } = gpu;
  const plane = planeWidth(caps);
  const peak = peakOf(gpu);
  const l2 = peak?.l2Bytes ?? 8 * 1024 * 1024;
  const timeOpts = {
    reps: opts.reps,
    targetMs: opts.targetMs,
    maxIters: opts.quick ? 1 : 200,
    // The clock warm-up matters only on real GPUs; a quick run is for SwiftShader.
    warmMs: opts.quick ? 0 : CLOCK_WARM_MS,
  };
  // Quick runs check the harness: one bank is enough (CPU adapters have no L2 to defeat).
  const banks = (bytes: number) => (opts.quick ? 1 : banksFor(bytes, l2));
  const arms: Arm[] = ['scalar', 'dp4a', 'subgroup-matrix'];
  const bestArm = arms.filter((a) => int8ArmSupport(caps, a).ok).pop() ?? 'scalar';
  const fastArms = arms.filter((a) => a !== 'scalar');
  const incumbent = mmqQ4kIncumbent();
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
  // The headline shape is where tiles are tuned and the torch ratio is taken: 2048x4096x4096 unless a
  // --shapes list leaves it out (then its first shape; only the listed shapes run).
  const isHeadline = (s: Shape) => s.m === 2048 && s.n === 4096 && s.k === 4096;
  const head = opts.quick ? shapes[0]! : (shapes.find(isHeadline) ?? shapes[0]!);
  const gemmTiles = opts.quick
    ? [GEMM_F32_SMALL_TILE]
    : [
        GEMM_F32_DEFAULT_TILE,
        { bm: 64, bn: 128, bk: 16, tm: 4, tn: 8 },
        { bm: 128, bn: 64, bk: 16, tm: 8, tn: 4 },
      ];
  const result: BenchResult = {
    date: new Date().toISOString(),
    quick: opts.quick,
    adapter: {
      vendor: caps.vendor,
      architecture: caps.architecture,
      description: caps.description,
      plane,
      features: caps.features,
    },
    dawnFlags: gpu.flags,
    ...(peak ? { peak } : {}),
    rows: [],
    tuning: [],
    ...(opts.torch ? { torch: opts.torch } : {}),
  };
  const want = (id: string) => !opts.filter || opts.filter.test(id);
  const sweeps = Math.max(1, Math.floor(opts.sweeps ?? 1));
  // Rows gated on each live problem, for the extra sweeps (sweeps > 1).
  const gated = new Map<Problem, GatedRow[]>();
  // family/arm -> the tuned tile (and staging): at the headline shape, or per shape with tuneEveryShape.
  const tuned = new Map<string, TileChoice>();

  const bench = async (prob: Problem, c: Candidate | BenchRow) => {
    const row = 'passes' in c ? c.row : c;
    if (!want(`${row.id}@${row.m}x${row.n}x${row.k}`)) return;
    if ('passes' in c && opts.mutateWgsl) {
      const main = c.passes[c.mainPass]!;
      c.passes[c.mainPass] = { ...main, wgsl: opts.mutateWgsl(row.id, main.wgsl) };
    }
    const done: GatedRow = 'passes' in c ? await gateAndTime(gpu, prob, c, timeOpts, peak) : { row };
    result.rows.push(done.row);
    log(rowLine(done.row));
    if (sweeps > 1) gated.set(prob, [...(gated.get(prob) ?? []), done]);
    opts.onProgress?.(result);
  };
  /** After a problem's last row: the extra sweeps over its rows, then its buffers go. */
  const finish = async (prob: Problem) => {
    const rows = gated.get(prob);
    if (rows) {
      await resweep(prob, rows, sweeps, timeOpts, peak, log);
      gated.delete(prob);
      opts.onProgress?.(result);
    }
    prob.resident.destroy();
  };

  const tune = async (
    prob: Problem,
    family: string,
    arm: string,
    shape: Shape,
    make: (c: TileChoice) => Candidate | BenchRow,
    workgroupBytes: (c: TileChoice) => number,
    space: Space = mmqQ4kSpace(),
    incumbentStaging?: CoopmatStaging,
  ) => {
    if (!opts.tune || !want(`${family}/${arm}/tune`)) return;
    // Three timed batches a measure (six when they disagree; the fastest), as the app's evaluator takes
    // the minimum of three: one slow phase no longer decides a config (quick runs check the machinery: one).
    const ev = new SampledTileEval(
      gpu,
      prob,
      make,
      workgroupBytes,
      opts.quick ? 1 : 3,
      timeOpts.warmMs,
      space,
    );
    const evo = new Evolution(
      opts.quick
        ? { population: 3, generations: 1, measureIters: 1 }
        : // 16 x 4: ~60 distinct tiles, most of the feasible space; 12 x 3 missed coopmat's best tile.
          { population: 16, generations: 4, measureIters: 10 },
    );
    const report = await evo.run(ev.space, ev, 0x5eed, {
      seeds: huntSeeds(ev.space, incumbent, incumbentStaging),
    });
    result.tuning.push({
      family,
      arm,
      shape,
      ...(report.winner ? { winner: report.winner } : {}),
      bestMs: report.bestMs,
      evaluated: report.evaluated,
      failedGate: report.failedGate.length,
      rejected: report.rejected.length,
      ...(report.finals.length ? { finals: report.finals } : {}),
    });
    const win = report.measured.find((e) => e.config === report.winner);
    log(
      `[tune] ${family}/${arm} at ${shape.m}x${shape.n}x${shape.k}: ${report.evaluated} configs, winner ${report.winner ?? 'none'} ${report.bestMs.toFixed(4)} ms (${report.failedGate.length} failed the gate, ${report.rejected.length} rejected)` +
        (report.finals.length
          ? `; finalists re-timed in ${fmt(finalsWallMs(report.finals)! / 1000, 1)} s: ${report.finals.map((f) => `${f.config} ${f.ms.toFixed(4)} (search ${f.searchMs.toFixed(4)})`).join(', ')}`
          : ''),
    );
    if (win) tuned.set(`${family}/${arm}`, choiceOf(ev.space, win.values));
  };
  /** Tune a family of MMQ specs over the tile: each candidate and its workgroup bytes from `specOf(tile)`. */
  const tuneMmq = (
    prob: Problem,
    family: string,
    arm: Arm,
    shape: Shape,
    specOf: (tile: TileParams) => MmqSpec,
    data: MmqQ8Data | MmqQ4kData,
  ) =>
    tune(
      prob,
      family,
      arm,
      shape,
      ({ tile }) => mmqCandidate(caps, shape, specOf(tile), family, 'tuned', data),
      ({ tile }) => mmqWorkgroupBytes(specOf(tile)),
    );

  // Tune first, at the headline shape, so every shape can bench "tuned vs incumbent".
  const order = [head, ...shapes.filter((s) => s.m !== head.m || s.n !== head.n || s.k !== head.k)];
  for (const shape of order) {
    const { m, n, k } = shape;
    const isHead = shape === head;
    log(`\n== ${m} x ${n} x ${k} ==`);
    // ---- Q4_K problem: int8 MMQ families, the f16 coopmat twin and the f32 baseline on its dequantized weight.
    const q4 = fastQ4kData(m, n, k, 1);
    const x = dequantActivation(q4.xq, q4.xs, m, k);
    const q4Inputs: MmqInputs = { weights: 'q4k', data: q4 };
    const q4Bytes = mmqWeightBytes('q4k', n, k);
    const q4Prob: Problem = {
      key: `q4k ${m}x${n}x${k}`,
      resident: makeResident(
        device,
        mmqProblemBuffers(q4Inputs, shape, [
          { name: 'x', kind: 'read-only-storage', data: x },
          { name: 'wd', kind: 'read-only-storage', data: q4.w.d },
          { name: 'wdm', kind: 'read-only-storage', data: q4.w.dmin },
          { name: 'xh', kind: 'storage', size: XH_SCRATCH_ROWS(m) * k * 2 },
          { name: 'xt', kind: 'storage', size: XH_SCRATCH_ROWS(m) * k * 2 + SPLIT_SLACK_BYTES },
          { name: 'wh', kind: 'storage', size: XH_SCRATCH_ROWS(n) * k * 2 + SPLIT_SLACK_BYTES },
        ]),
        [...Q4K_ROTATE, ...COOPMAT_Q4K_ROTATE],
        banks(q4Bytes),
      ),
      idx: sampleIndices(m, n, opts.quick ? 32 : 128),
    };
    const q4kTileSpec = (tile: TileParams, arm: Arm): MmqSpec => ({
      ...mmqPresetSpec('mmq-q4k-tile', { m, n, k, tile, arm, plane }),
    });
    if (isHead)
      for (const arm of fastArms) {
        if (!int8ArmSupport(caps, arm).ok) continue;
        await tuneMmq(q4Prob, 'mmq-q4k-tile', arm, shape, (t) => q4kTileSpec(t, arm), q4);
      }
    if (isHead || opts.tuneEveryShape) {
      const cmArm = coopmatMatrixUnsupported(caps) ? 'scalar' : 'subgroup-matrix';
      // The tile and the staging (the whole plan is timed); the winner's staging is the bench's too.
      const specStagingOf = (c: TileChoice) => coopmatStagingSpec(c.staging ?? defaultCoopmatStaging(cmArm));
      // Quick runs tune one family (the search machinery); full runs tune every accelerated family.
      if (!opts.quick)
        await tune(
          q4Prob,
          'coopmat-f16',
          cmArm,
          shape,
          (c) => coopmatCandidate(caps, shape, c.tile, cmArm, 'tuned', x, q4, specStagingOf(c)),
          (c) => coopmatWorkgroupBytes(coopmatBenchSpec(caps, shape, c.tile, cmArm, specStagingOf(c))),
          coopmatTileSpace(),
          defaultCoopmatStaging(cmArm),
        );
    }
    for (const arm of arms)
      await bench(
        q4Prob,
        mmqCandidate(
          caps,
          shape,
          mmqPresetSpec('mmq-q4k-rt', { m, n, k, arm, plane }),
          'mmq-q4k-rt',
          'fixed',
          q4,
        ),
      );
    // (b) scalar vs accelerated arms is measured on the fixed kernels; the tile kernel adds its scalar arm in full runs.
    for (const arm of opts.quick ? fastArms : arms)
      await bench(
        q4Prob,
        mmqCandidate(caps, shape, q4kTileSpec(incumbent, arm), 'mmq-q4k-tile', 'incumbent', q4),
      );
    for (const arm of fastArms) {
      const t = tuned.get(`mmq-q4k-tile/${arm}`)?.tile;
      if (t && tileStr(t) !== tileStr(incumbent))
        await bench(q4Prob, mmqCandidate(caps, shape, q4kTileSpec(t, arm), 'mmq-q4k-tile', 'tuned', q4));
    }
    for (const arm of ['scalar', 'subgroup-matrix'] as const) {
      await bench(q4Prob, coopmatCandidate(caps, shape, incumbent, arm, 'incumbent', x, q4));
      const t = tuned.get(`coopmat-f16/${arm}`);
      const staging = coopmatStagingSpec(t?.staging ?? defaultCoopmatStaging(arm));
      if (t && (tileStr(t.tile) !== tileStr(incumbent) || t.staging !== defaultCoopmatStaging(arm)))
        await bench(q4Prob, coopmatCandidate(caps, shape, t.tile, arm, 'tuned', x, q4, staging));
    }
    // Staging variants of the matrix arm at fixed tiles that fit 48 KiB (full runs); quick runs take the
    // pipelined direct-A kernel (two timed passes) and the split plan (three) once on whichever coopmat
    // arm the adapter has.
    if (!opts.quick)
      for (const [t, staging] of COOPMAT_STAGING_TILES)
        await bench(
          q4Prob,
          coopmatCandidate(caps, shape, tileOf4(t), 'subgroup-matrix', 'fixed', x, q4, staging),
        );
    else
      for (const staging of [
        { pipeline: true, rowPad: 8, aDirect: true },
        { split: true, rowPad: 8 },
      ])
        await bench(
          q4Prob,
          coopmatCandidate(
            caps,
            shape,
            incumbent,
            coopmatMatrixUnsupported(caps) ? 'scalar' : 'subgroup-matrix',
            'fixed',
            x,
            q4,
            staging,
          ),
        );
    await finish(q4Prob);
    // ---- f32 baseline on the same problem, dequantized.
    if (gemmTiles.some((t) => want(`gemm-f32/${gemmTileStr(t)}@${m}x${n}x${k}`))) {
      const w = dequantizeQ4K(q4.w, n, k);
      const fProb: Problem = {
        key: `f32 ${m}x${n}x${k}`,
        resident: makeResident(
          device,
          [
            { name: 'x', kind: 'read-only-storage', data: x },
            { name: 'w', kind: 'read-only-storage', data: w },
            { name: 'out', kind: 'storage', size: m * n * 4 },
            { name: 'dims', kind: 'uniform', data: gemmF32Dims(m, n, k) },
          ],
          ['w'],
          banks(n * k * 4),
        ),
        idx: q4Prob.idx,
      };
      for (const t of gemmTiles) await bench(fProb, gemmCandidate(caps, shape, t, x, w));
      await finish(fProb);
    }
    // ---- Q8_0 problem.
    const q8 = fastQ8Data(m, n, k, 2);
    const q8Inputs: MmqInputs = { weights: 'q8_0', data: q8 };
    const q8Prob: Problem = {
      key: `q8_0 ${m}x${n}x${k}`,
      resident: makeResident(
        device,
        mmqProblemBuffers(q8Inputs, shape),
        Q8_ROTATE,
        banks(mmqWeightBytes('q8_0', n, k)),
      ),
      idx: q4Prob.idx,
    };
    // The register-accumulator tile kernel is a spec of the same generator with Q8_0 weights.
    const q8TileSpec = (tile: TileParams, arm: Arm): MmqSpec => ({
      ...q4kTileSpec(tile, arm),
      weights: 'q8_0',
    });
    if (isHead && !opts.quick && int8ArmSupport(caps, bestArm).ok && bestArm !== 'scalar') {
      await tuneMmq(q8Prob, 'mmq-q8-tile', bestArm, shape, (t) => q8TileSpec(t, bestArm), q8);
    }
    for (const arm of arms)
      await bench(
        q8Prob,
        mmqCandidate(
          caps,
          shape,
          mmqPresetSpec('mmq-q8-tiled', { m, n, k, arm, plane }),
          'mmq-q8-tiled',
          'fixed',
          q8,
        ),
      );
    for (const arm of fastArms) {
      await bench(
        q8Prob,
        mmqCandidate(caps, shape, q8TileSpec(incumbent, arm), 'mmq-q8-tile', 'incumbent', q8),
      );
      const t = tuned.get(`mmq-q8-tile/${arm}`)?.tile;
      if (t && tileStr(t) !== tileStr(incumbent))
        await bench(q8Prob, mmqCandidate(caps, shape, q8TileSpec(t, arm), 'mmq-q8-tile', 'tuned', q8));
    }
    await finish(q8Prob);
  }

  if (opts.moe) await benchMoe(gpu, opts, result, timeOpts, peak, l2, want, log);
  deriveRatios(result.rows);
  result.headline = headline(result, head);
  for (const line of table(result)) log(line);
  return result;
}

async function benchMoe(
  gpu: BenchGpu,
  opts: BenchOptions,
  result: BenchResult,
  timeOpts: { reps: number; targetMs: number; maxIters: number; warmMs: number },
  peak: Peak | undefined,
  l2: number,
  want: (id: string) => boolean,
  log: Log,
) {
  const { caps, device } = gpu;
  const plane = planeWidth(caps);
  const cases = opts.quick
    ? [{ tokens: 8, experts: 4, topk: 2, n: 64, k: 256 }]
    : [8, 64].flatMap((experts) =>
        [32, 128, 512, 2048].map((tokens) => ({ tokens, experts, topk: 2, n: 4096, k: 4096 })),
      );
  for (const c of cases) {
    const slots = c.tokens * c.topk;
    const ids = moeRouting(c.tokens, c.experts, c.topk, MOE_ROUTING_SEED);
    const load = new Uint32Array(c.experts);
    ids.forEach((e) => load[e]!++);
    const cap = Math.max(1, ...load);
    for (const arm of ['dp4a', 'subgroup-matrix'] as const) {
      const spec: MmqSpec = { ...mmqPresetSpec('moe-q4k-id', { m: slots, n: c.n, k: c.k, arm, plane }) };
      const bm = spec.tile.wm * spec.tile.rm * 16;
      // grid.y sized for the average expert load (the seed's choice); the grid-stride covers the rest.
      const problem: MoeProblem = { ...c, ids, cap, ytiles: Math.max(1, Math.ceil(slots / c.experts / bm)) };
      const row: BenchRow = {
        ...benchRow('moe-q4k-id', 'q4k', arm, 'fixed', tileStr(spec.tile), { m: slots, n: c.n, k: c.k }),
        experts: c.experts,
        topk: c.topk,
      };
      if (!want(`${row.id}@e${c.experts}t${c.tokens}`)) continue;
      const why = moeAllProblems(spec, problem, caps);
      if (why.length) {
        result.rows.push(skippedRow(row, why));
        log(rowLine(result.rows.at(-1)!));
        continue;
      }
      const data = fastQ4kData(slots, c.experts * c.n, c.k, 3);
      const plan = buildMoePlan({ weights: 'q4k', data }, problem, spec, { label: row.id });
      const bankBytes = mmqWeightBytes('q4k', c.experts * c.n, c.k);
      const prob: Problem = {
        key: row.id,
        resident: makeResident(device, plan.buffers, Q4K_ROTATE, opts.quick ? 1 : banksFor(bankBytes, l2)),
        idx: sampleIndices(slots, c.n, opts.quick ? 32 : 128),
      };
      // Weight bytes the GEMM must read: the experts the routing actually uses.
      const used = new Set(ids).size;
      const cand: Candidate = {
        row,
        passes: plan.passes,
        mainPass: plan.mainPass,
        output: plan.output,
        oracle: sampledOracle(c.n, (slot, col) => q4kElement(data, slot, ids[slot]! * c.n + col, c.k)),
        tol: 1e-5,
        ops: 2 * slots * c.n * c.k,
        weightBytes: mmqWeightBytes('q4k', used * c.n, c.k),
        kind: 'int8',
      };
      // One sweep: MoE rows are not timed again (BenchOptions.sweeps).
      const { row: done } = await gateAndTime(gpu, prob, cand, timeOpts, peak);
      result.rows.push(done);
      log(rowLine(done) + ` experts=${c.experts} tokens=${c.tokens}`);
      prob.resident.destroy();
    }
  }
}

/** The (wm, wn, rm, rn) part of a tile name, without staging suffixes. */
const baseTile = (tile: string) => tile.split(',').slice(0, 4).join(',');

/** Same-run ratios: (a) vs the best f32 baseline tile, (b) vs the scalar arm, (c) tuned vs incumbent. */
function deriveRatios(rows: BenchRow[]) {
  const key = (r: BenchRow) => `${r.m}x${r.n}x${r.k}/${r.experts ?? 0}`;
  const ok = (r: BenchRow) => r.ms !== undefined && r.correctness?.pass;
  const bestF32 = new Map<string, number>();
  for (const r of rows)
    if (r.family === 'gemm-f32' && ok(r))
      bestF32.set(key(r), Math.min(bestF32.get(key(r)) ?? Infinity, r.ms!));
  for (const r of rows) {
    if (!ok(r)) continue;
    const f = bestF32.get(key(r));
    if (f !== undefined && r.family !== 'gemm-f32') r.vsF32 = f / r.ms!;
    if (r.arm !== 'scalar') {
      // The same (wm, wn, rm, rn) on the scalar arm; each arm with its own default staging suffix
      // ("2,4,1,1,pad8,pipe" on the coopmat matrix arm), so staging variants compare with it too.
      const s = rows.find(
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
  const int8 = best(at.filter((r) => r.family.startsWith('mmq-')));
  const any = best(at.filter((r) => r.family !== 'gemm-f32'));
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
 * quantized GEMM against torch._int_mm, what the goal (0.5x) asks of the plan and of its GEMM pass, and
 * both against torch's f16 matmul for scale.
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
        // A run with no dense plan at this shape (e.g. `--filter moe`) has nothing to compare.
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
  const shape = `${r.m}x${r.n}x${r.k}`;
  if (r.skipped) return `  skip  ${r.id.padEnd(40)} ${shape.padEnd(16)} ${r.skipped.slice(0, 160)}`;
  if (r.error) return `  ERROR ${r.id.padEnd(40)} ${shape.padEnd(16)} ${r.error.slice(0, 300)}`;
  const c = r.correctness;
  const verdict = c
    ? c.pass
      ? 'ok'
      : `WRONG rel ${c.relToMax.toExponential(1)}${c.allWritten ? '' : ' unwritten'}`
    : '?';
  return `  ${verdict.padEnd(5)} ${r.id.padEnd(40)} ${shape.padEnd(16)} ${fmt(r.ms, 4).padStart(9)} ms ${fmt(r.tops, 1).padStart(7)} TOPS ${fmt(r.weightGBs, 0).padStart(6)} GB/s${r.peakFraction !== undefined ? ` ${fmt(100 * r.peakFraction, 1)}% peak` : ''}`;
}

/** The final table: one line per measured row, then tuning and the headline. */
export function table(result: BenchResult): string[] {
  const lines: string[] = [];
  lines.push('');
  lines.push(
    `adapter: ${result.adapter.vendor} ${result.adapter.description} plane ${result.adapter.plane}${result.quick ? ' (QUICK: harness check, not speed)' : ''}`,
  );
  if (result.peak) lines.push(`peak: ${result.peak.source}`);
  lines.push(
    'family/arm/tile                             shape            ms/dispatch   TOPS   wGB/s  %peak  xF32  xScalar xIncumb  check',
  );
  for (const r of result.rows) {
    if (r.ms === undefined) continue;
    const shape = rowShape(r);
    const c = r.correctness;
    lines.push(
      `${r.id.padEnd(43)} ${shape.padEnd(16)} ${fmt(r.ms, 4).padStart(11)} ${fmt(r.tops, 1).padStart(6)} ${fmt(r.weightGBs, 0).padStart(7)} ${(r.peakFraction !== undefined ? fmt(100 * r.peakFraction, 1) : '-').padStart(6)} ${fmt(r.vsF32).padStart(5)} ${fmt(r.vsScalar).padStart(8)} ${fmt(r.vsIncumbent).padStart(7)}  ${c?.pass ? 'ok' : 'WRONG'} ${c ? c.relToMax.toExponential(1) : ''}`,
    );
  }
  const failed = result.rows.filter((r) => r.error || (r.correctness && !r.correctness.pass));
  if (failed.length)
    lines.push(
      `${failed.length} config(s) FAILED (error or wrong result): ${failed.map((r) => `${r.id}@${r.m}x${r.n}x${r.k}`).join(', ')}`,
    );
  for (const t of result.tuning)
    lines.push(
      `tuned ${t.family}/${t.arm} at ${t.shape.m}x${t.shape.n}x${t.shape.k}: ${t.winner ?? 'none'} (${t.evaluated} evaluated, ${t.failedGate} failed gate, ${t.rejected} rejected)`,
    );
  if (result.headline) lines.push(...headlineLines(result.headline));
  return lines;
}
