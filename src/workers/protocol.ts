// The one typed message protocol between the app (main thread) and the GPU worker. Every message is a
// member of a discriminated union on `type`; typed arrays in results are transferred, not copied.
import type { Gate, Verdict } from '../kernels/compare';
import type {
  FamilyParams,
  GgufFileRef,
  KernelId,
  OwnershipPhase,
  ResolvedConfig,
  RunConfig,
} from '../kernels/family';
import type { AdapterCaps, Arm } from '../kernels/gpu/caps';
import type { OwnershipMap } from '../kernels/gpu/instrument';
import type { WgslMessage } from '../kernels/gpu/runner';
import type { Timing } from '../kernels/gpu/timing';
import type { ProbeResult } from '../kernels/perf/probe.run';
import type { PassTraffic } from '../kernels/perf/traffic';
import type { Comparison } from '../kernels/perf/spread';
import type { ModelPreset, TensorListing } from '../kernels/models';
import type { PickGemm, PickResult } from '../kernels/tune/pick';
import type { ByteSource } from '../kernels/quant';
import type { ElementPartials } from '../kernels/partials';

/** How a run or a tuning measurement is timed (the runner's TimingOptions a user can set). */
export interface TimingRequest {
  /** GPU time per timed batch, ms. */
  targetMs: number;
  /** Timed batches (as many again when they disagree by over 10%); the fastest counts. */
  batches: number;
}

export interface EvolutionParams {
  population: number;
  generations: number;
  /** The search's random seed (not the data seed). */
  seed: number;
  /** GPU time per timed batch of a measurement, ms. */
  measureMs: number;
  /** Timed batches per measurement; the fastest counts. */
  batches: number;
  /** Cold weight banks rotated per run. */
  banks: number;
}

/** The hunt the app's tuner and `mmq tune` start from: small enough for SwiftShader in seconds, big enough to show a search. */
export const DEFAULT_EVO: EvolutionParams = {
  population: 8,
  generations: 4,
  seed: 0xc0ffee,
  measureMs: 10,
  batches: 3,
  banks: 4,
};

/** Recorded or analytic ownership as the worker sends it: the kernels' OwnershipMap, transferred as is. */
export type OwnershipBuffers = OwnershipMap;

// ---------------------------------------------------------------- requests (app -> worker)
export type WorkerRequest =
  | { type: 'init'; id: number }
  | { type: 'generate'; id: number; config: RunConfig }
  | {
      type: 'run';
      id: number;
      config: RunConfig;
      /** The user's edited text of the plan's main pass (the host suffix is appended by the worker). */
      wgsl?: string;
      /** Time the plan and each pass after the correctness run; absent = untimed. */
      timing?: TimingRequest;
      /** Also run the instrumented variant and return the recorded ownership. */
      instrument: boolean;
    }
  | {
      type: 'tune';
      id: number;
      /** The problem to tune (shape and data); the family's search sets its tile, staging and arm. */
      base: RunConfig;
      evo: EvolutionParams;
      /** Measurements already taken by this hunt (a resumed run): replayed, not measured again. */
      resume?: readonly TuneRecordEntry[];
      /** The app's stored run for this (device, op, problem): its winner is replayed when still valid. */
      cached?: TuneReport;
    }
  | { type: 'autokernel'; id: number; base: RunConfig; cachedWinner?: string }
  /**
   * The pick across families for one GEMM (kernels/tune/pick.ts): each family that takes its weight
   * offers its pick -- its stored tuned winner (`stored`, by family id: the app's IndexedDB, the CLI's
   * Kernel Tuner caches), else its incumbent or defaults -- and each is gated on its family's own gate
   * and timed through the one runner. Answered 'pick-result'.
   */
  | { type: 'pick'; id: number; gemm: PickGemm; stored?: StoredPicks; timing: TimingRequest }
  /**
   * A model run: the pick of each GEMM in turn, 'model-progress' after each (and 'progress' within),
   * then 'model-run-done'; a cancel ends it between candidates and between timed batches.
   */
  | {
      type: 'model-run';
      id: number;
      gemms: readonly { gemm: PickGemm; stored?: StoredPicks }[];
      timing: TimingRequest;
    }
  /** Measure the adapter's peaks (bandwidth, each compute roof it offers): kernels/perf/probe.run.ts. */
  | { type: 'probe'; id: number }
  /**
   * Open a GGUF (a browser File, or a Blob over a file on disk): the header is read, never the whole
   * file; a tensor's bytes are read when a config names it. The worker keeps the last few files open.
   */
  | {
      type: 'open-gguf';
      id: number;
      /**
       * A Blob, or (in process only: the CLI) a ByteSource over a file handle, since Node 20's Blob over
       * a file reports its size modulo 2^32.
       */
      file: Blob | ByteSource;
      /** The file's name where the Blob is not a File. */ name?: string;
    }
  /**
   * The CPU oracle's output of a config, without running anything on a GPU: what the app shows where
   * WebGPU is missing (the generators and oracles are pure TypeScript). Served by the worker shell.
   */
  | { type: 'oracle'; id: number; config: RunConfig }
  /** The k-block breakdown of output element (row, col) from the family's oracle (the error drill-down). */
  | { type: 'partials'; id: number; config: RunConfig; row: number; col: number }
  | { type: 'cancel'; id: number }
  /** Diagnostics: destroy the worker's device, to exercise device-loss reporting and recovery. */
  | { type: 'lose-device'; id: number };

/** Stored tuned winners a pick may serve: a family id -> its winner's config name in its search space. */
export type StoredPicks = Readonly<Record<KernelId, string>>;

/** A request without its id (the client assigns ids): Omit distributed over the union. */
export type WorkerRequestBody = WorkerRequest extends infer R
  ? R extends { id: number }
    ? Omit<R, 'id'>
    : never
  : never;

// ---------------------------------------------------------------- responses (worker -> app)
/** One pass of a generated plan, as the editor shows it. */
export interface GeneratedPass {
  label: string;
  /** The kernel text (editable for the main pass). */
  wgsl: string;
  /** Host suffix appended after it (not editable; line numbers of `wgsl` stay right). */
  suffix: string;
  entryPoint: string;
  workgroupSize: number;
  workgroups: readonly [number, number, number];
}

export interface GeneratedKernel {
  /** Every pass of the plan in dispatch order; `mainPass` is the one the editor edits. */
  passes: GeneratedPass[];
  mainPass: number;
  phases: OwnershipPhase[];
  /** The plane width the kernel was generated for (the config's, else the adapter's). */
  plane: number;
  /** Why this config cannot run on this adapter; non-empty means no passes. */
  problems: string[];
  /**
   * Set when the kernel was generated without a GPU device (no WebGPU here): for which adapter it was
   * generated instead, in words.
   */
  note?: string;
}

/** The "generated" reply for a config that cannot run: no kernel text, only the reasons. */
export function kernelWithProblems(problems: string[], plane = 0): GeneratedKernel {
  return { passes: [], mainPass: 0, phases: [], plane, problems };
}

/** A run's timing: the whole plan, and each pass alone when it has several. */
export interface RunTiming extends Omit<Timing, 'samples'> {
  /** Batch samples of the whole plan, ms per run. */
  samples: number[];
  /** Each pass timed alone (plans of several passes), with its batches' ms per run. */
  passes?: { label: string; ms: number; coarse: boolean; samples: number[] }[];
}

export interface RunOutcome {
  config: ResolvedConfig;
  rows: number;
  cols: number;
  output: Float32Array | Int32Array;
  oracle: Float32Array | Int32Array;
  fullPrecision?: Float32Array;
  verdict: Verdict;
  timing?: RunTiming;
  /** The op's throughput from the whole plan's time: ops / ms (int8 TOPS or f16 TFLOP/s). */
  throughput?: { value: number; unit: 'int8 TOPS' | 'TFLOP/s' };
  ownership?: OwnershipBuffers;
  analyticOwnership?: Partial<Record<OwnershipPhase, OwnershipBuffers>>;
  warnings: WgslMessage[];
  /** True when the user's edited WGSL ran instead of the generated one. */
  edited: boolean;
  /** The output tile one workgroup covers, when the family states it. */
  outputTile?: { rows: number; cols: number };
  /** Wall time of the correctness run (compile excluded), ms: what the next estimate is based on. */
  runWallMs: number;
  /** Wall time of compiling the plan's pipelines (none when they were compiled before), ms. */
  compileMs?: number;
  /** Multiply-adds x 2 of the op (for estimates). */
  ops: number;
  /** The op's arithmetic (which compute roof its arm runs against). */
  arithmetic?: 'int8' | 'f16';
  /** Bytes each pass moves and its operations (kernels/perf/traffic.ts), in dispatch order. */
  traffic?: PassTraffic[];
  /** The real tensor of the run: the bytes read from its file to load it (once; later runs reuse it). */
  tensorRead?: { tensor: string; bytes: number; ms: number };
}

/** An opened GGUF as the app shows it: what the file is, its metadata and tensors, its model GEMMs. */
export interface OpenedModel {
  file: GgufFileRef;
  version: number;
  /** Bytes read to open it (the header, or the whole file when it was gzip-compressed). */
  bytesRead: number;
  metadata: { key: string; type: string; value: string }[];
  tensors: TensorListing[];
  /** The model's GEMMs from its metadata and tensors, or why none could be derived. */
  preset?: ModelPreset;
  presetProblem?: string;
}

export type TuneVerdict = 'measured' | 'rejected' | 'failed-gate';

export interface TuneRecordEntry {
  /** The config's name in the family's space (e.g. "WM=2,WN=4,RM=1,RN=1,ARM=1"). */
  config: string;
  /** The params and arm it stands for. */
  params: FamilyParams;
  arm: Arm;
  generation: number;
  verdict: TuneVerdict;
  ms: number; // Infinity when rejected / failed
  reason?: string;
  worstRel?: number;
  /** Output block of the config (tiled families), for the charts. */
  bm?: number;
  bn?: number;
  /** The config's knobs readably ("wm=2,wn=4,rm=1,rn=1,arm=dp4a"). */
  label?: string;
  /** ms per run of each timed batch of its measurement. */
  samples?: number[];
  /** Where its measurement's wall time went, ms. */
  phases?: { compileMs: number; verifyMs: number; benchmarkMs: number };
  /** ISO time it was measured. */
  at?: string;
  /** Bytes one run of its plan moves (kernels/perf/traffic.ts), for the roofline. */
  bytes?: number;
}

export interface TuneReport {
  /** The family's tuning op (cache key) and the family. */
  op: string;
  kernel: KernelId;
  deviceId: string;
  /** The problem tuned: its shape params and data (the key the app stores it under). */
  problem: string;
  base: RunConfig;
  /** Winner's name in the space; '' when nothing passed. */
  winner: string;
  /** The winner as a config (loads into the playground). */
  winnerConfig?: RunConfig;
  bestMs: number;
  incumbentMs?: number;
  entries: TuneRecordEntry[];
  bestPerGeneration: number[];
  evo: EvolutionParams;
  startedAt: string;
  durationMs: number;
  /** 'complete'; 'interrupted': a reload or cancel ended it early (the entries so far are kept). */
  status: 'complete' | 'interrupted';
  timing?: 'timestamp' | 'wall';
  /** Worst rel_to_max of every dispatched config (the correctness witness). */
  worstRel?: number;
  /** Set when the search's gate checked a sample of this many output rows (large shapes). */
  gatedRows?: number;
  /** The winner against the family's own gate on its whole output, before it was stored. */
  winnerVerdict?: { pass: boolean; gate: string; relToMax: number; mismatches: number };
  /** The finalists re-timed after the search: the winner is the fastest of these. */
  finals?: { config: string; ms: number; searchMs: number; wallMs?: number }[];
  /** Operations of one run of the problem (2mnk), for GFLOP/s and the roofline. */
  ops?: number;
  /**
   * Incumbent (a) against winner (b), re-timed interleaved in rounds: a speedup is claimed only when
   * the rounds do not overlap (kernels/perf/spread.ts compareRounds).
   */
  claim?: Comparison & { rounds: { incumbentMs: number[]; winnerMs: number[] } };
}

export type WorkerResponse =
  | { type: 'ready'; id: number; caps: AdapterCaps; deviceId: string; plane: number }
  | { type: 'generated'; id: number; kernel: GeneratedKernel }
  | {
      type: 'progress';
      id: number;
      stage: string;
      /** Of the whole request, 0..1; never less than the request's last one. */
      fraction: number;
      /**
       * What the request is waiting on from now: the CPU (an oracle, a data build: nothing is in flight on
       * the GPU), or the GPU with about `gpuMs` of work submitted (a cancel then waits for it).
       */
      busy?: 'cpu' | 'gpu';
      gpuMs?: number;
    }
  | { type: 'run-result'; id: number; outcome: RunOutcome }
  | {
      type: 'compile-error';
      id: number;
      /** Positions are into `code` = the user's text + host suffix; lines past `editorLines` are in the suffix. */
      messages: WgslMessage[];
      code: string;
      editorLines: number;
    }
  | {
      type: 'tune-progress';
      id: number;
      generation: number;
      evaluated: number;
      bestMs: number;
      entry?: TuneRecordEntry;
      /** What the hunt is doing now ("searching", "re-timing finalists", "checking the winner"). */
      stage?: string;
    }
  | { type: 'tune-done'; id: number; report: TuneReport; fromCache: boolean }
  | { type: 'probe-result'; id: number; result: ProbeResult }
  | {
      type: 'autokernel-result';
      id: number;
      /** The config that served: the cached winner's name, or 'incumbent'. */
      served: string;
      config: RunConfig;
      verdict: Verdict;
      ms?: number;
      /** Why a cached winner that was offered did not serve (unparsable, infeasible, rejected here). */
      fallback?: string;
    }
  | { type: 'gguf-opened'; id: number; model: OpenedModel }
  /** The answer to 'pick': every candidate and the winner with its margin. */
  | { type: 'pick-result'; id: number; result: PickResult }
  /** A model run's GEMM `index` picked (its request goes on with the next). */
  | { type: 'model-progress'; id: number; index: number; result: PickResult }
  /** A model run's end: every GEMM's pick, in the request's order. */
  | { type: 'model-run-done'; id: number; results: PickResult[] }
  /** The answer to 'oracle': the exact CPU result [rows, cols] and the gate a GPU result is held to. */
  | {
      type: 'oracle-result';
      id: number;
      rows: number;
      cols: number;
      oracle: Float32Array | Int32Array;
      gate: Gate;
    }
  /** The answer to 'partials'; `partials` absent: the family does not break its sum down (`why`). */
  | { type: 'partials-result'; id: number; partials?: ElementPartials; why?: string }
  | { type: 'cancelled'; id: number }
  /** 'file': a GGUF that is not one, is cut short, or is not open (pick it again). */
  | {
      type: 'error';
      id: number;
      kind: 'shape' | 'validation' | 'file' | 'unsupported' | 'internal';
      message: string;
    }
  | { type: 'device-lost'; reason: string; message: string };

/** Typed arrays inside a response, for postMessage's transfer list. */
export function transferablesOf(msg: WorkerResponse): Transferable[] {
  const out: Transferable[] = [];
  const add = (a: ArrayBufferView | undefined) => {
    if (a && a.buffer instanceof ArrayBuffer && !out.includes(a.buffer)) out.push(a.buffer);
  };
  if (msg.type === 'oracle-result') add(msg.oracle);
  if (msg.type === 'run-result') {
    const o = msg.outcome;
    add(o.output);
    add(o.oracle);
    add(o.fullPrecision);
    for (const own of [o.ownership, ...Object.values(o.analyticOwnership ?? {})]) {
      if (!own) continue;
      add(own.count);
      add(own.workgroup);
      add(own.plane);
      add(own.lane);
    }
  }
  return out;
}
