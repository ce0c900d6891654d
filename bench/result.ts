// What a bench run produces (the JSON bench.ts writes and bench/report.ts renders): its rows, tuning
// summaries and headline. Types only, shared by the harness's modules.
import type { FinalTiming } from '../src/kernels/tune';

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
  /** The config's knobs as the tables print them (knobLabel). */
  tile: string;
  /**
   * The values of the family's declared tile knobs (FamilyCatalog.tile), e.g. '8,1,2,8', where a tile
   * is in play: a row is compared with the scalar row of the same tile when none has all its knobs.
   */
  tileKnobs?: string;
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
  /** llama.cpp's harness (folder, versions, the device line ggml-vulkan printed) when its rows ran, or why not. */
  llama?: { dir?: string; version?: unknown; head?: unknown; device?: unknown; note?: string };
  /** The command's wall time and its process's CPU time, seconds (bench.ts, at the end). */
  wallS?: number;
  cpuS?: number;
}
