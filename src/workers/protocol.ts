// The one typed message protocol between the app (main thread) and the GPU worker. Every message is a
// member of a discriminated union on `type`; typed arrays in results are transferred, not copied.
import type { Verdict } from '../kernels/compare';
import type { AdapterCaps } from '../kernels/gpu/caps';
import type { OwnershipMap } from '../kernels/gpu/instrument';
import type { WgslMessage } from '../kernels/gpu/run';
import type { CoopmatStaging, KernelId, OwnershipPhase, ProblemConfig, TileParams } from '../kernels/family';

/** Tuning targets (the seed's ops). */
export type TuneOp = 'mmq_q4k_tile' | 'mmq_q4k_coopmat';

export interface EvolutionParams {
  population: number;
  generations: number;
  seed: number;
  /** Timed dispatches per measurement. */
  measureIters: number;
  /** Minimum over this many timed repeats. */
  repeats: number;
  /** Cold weight banks rotated per dispatch. */
  banks: number;
}

/** Recorded or analytic ownership as the worker sends it: the kernels' OwnershipMap, transferred as is. */
export type OwnershipBuffers = OwnershipMap;

// ---------------------------------------------------------------- requests (app -> worker)
export type WorkerRequest =
  | { type: 'init'; id: number }
  | { type: 'generate'; id: number; config: ProblemConfig }
  | {
      type: 'run';
      id: number;
      config: ProblemConfig;
      /** The user's edited kernel text (the host suffix is appended by the worker). */
      wgsl?: string;
      /** Timed dispatches after the correctness run (0 = untimed). */
      iters: number;
      /** Also run the instrumented variant and return the recorded ownership. */
      instrument: boolean;
    }
  | {
      type: 'tune';
      id: number;
      op: TuneOp;
      m: number;
      n: number;
      k: number;
      evo: EvolutionParams;
      /** The app's stored run for this (device, op, shape) (IndexedDB); the worker's Tuner replays it
       * when its winner still parses, else hunts. Omit to force a fresh hunt. */
      cached?: TuneReport;
    }
  | { type: 'autokernel'; id: number; op: TuneOp; m: number; n: number; k: number; cachedWinner?: string }
  | { type: 'cancel'; id: number }
  /** Diagnostics: destroy the worker's device, to exercise device-loss reporting and recovery. */
  | { type: 'lose-device'; id: number };

/** A request without its id (the client assigns ids): Omit distributed over the union. */
export type WorkerRequestBody = WorkerRequest extends infer R
  ? R extends { id: number }
    ? Omit<R, 'id'>
    : never
  : never;

// ---------------------------------------------------------------- responses (worker -> app)
export interface GeneratedKernel {
  /** Editable kernel text (what the editor shows). */
  wgsl: string;
  /** Host suffix appended after it (not editable; line numbers of `wgsl` stay right). */
  suffix: string;
  entryPoint: string;
  workgroupSize: number;
  workgroups: readonly [number, number, number];
  phases: OwnershipPhase[];
  /** Validation problems of this config on this adapter; non-empty means it cannot run. */
  problems: string[];
}

/** The "generated" reply for a config that cannot run: no kernel text, only the reasons. */
export function kernelWithProblems(problems: string[]): GeneratedKernel {
  return {
    wgsl: '',
    suffix: '',
    entryPoint: '',
    workgroupSize: 0,
    workgroups: [0, 0, 0],
    phases: [],
    problems,
  };
}

export interface RunOutcome {
  config: ProblemConfig;
  rows: number;
  cols: number;
  output: Float32Array | Int32Array;
  oracle: Float32Array | Int32Array;
  fullPrecision?: Float32Array;
  verdict: Verdict;
  /** ms per dispatch of the main pass (the kernel the editor shows). */
  msPerDispatch?: number;
  timing?: 'timestamp' | 'wall';
  /** A multi-pass plan: ms per run of all its passes, and each pass alone (RunResult.planMs / passMs). */
  planMs?: number;
  passMs?: { label: string; ms: number }[];
  /** int8 (or f16) TOPS of the whole plan: ops / planMs, or / msPerDispatch for one pass. */
  tops?: number;
  ownership?: OwnershipBuffers;
  analyticOwnership?: Partial<Record<OwnershipPhase, OwnershipBuffers>>;
  warnings: WgslMessage[];
  /** True when the user's edited WGSL ran instead of the generated one. */
  edited: boolean;
  /** The output tile one workgroup covers, when the family states it (PreparedProblem.outputTile). */
  outputTile?: { rows: number; cols: number };
}

export type TuneVerdict = 'measured' | 'rejected' | 'failed-gate';

export interface TuneRecordEntry {
  config: string;
  tile: TileParams;
  /** The coopmat twin's staging (its space searches it); absent for the int8 op. */
  staging?: CoopmatStaging;
  generation: number;
  verdict: TuneVerdict;
  ms: number; // Infinity when rejected / failed
  reason?: string;
  worstRel?: number;
  bm: number;
  bn: number;
}

export interface TuneReport {
  op: TuneOp;
  deviceId: string;
  m: number;
  n: number;
  k: number;
  winner: string;
  bestMs: number;
  incumbentMs?: number;
  entries: TuneRecordEntry[];
  bestPerGeneration: number[];
  evo: EvolutionParams;
  startedAt: string;
  durationMs: number;
  /** The arm the evaluator dispatched ('scalar' | 'dp4a' | 'subgroup-matrix' for int8; 'f16' paths for coopmat). */
  arm?: string;
  /** Plane width the tiles were partitioned by. */
  plane?: number;
  timing?: 'timestamp' | 'wall';
  /** Worst rel_to_max of every dispatched config (the correctness witness). */
  worstRel?: number;
  /** Set when the gate checked a sample of this many output rows (large shapes; see gateRows). */
  gatedRows?: number;
  /** The finalists re-timed after the search (Evolution's finals): the winner is the fastest of these. */
  finals?: { config: string; ms: number; searchMs: number; wallMs?: number }[];
}

export type WorkerResponse =
  | { type: 'ready'; id: number; caps: AdapterCaps; deviceId: string; plane: number }
  | { type: 'generated'; id: number; kernel: GeneratedKernel }
  | { type: 'progress'; id: number; stage: string; fraction: number }
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
    }
  | { type: 'tune-done'; id: number; report: TuneReport; fromCache: boolean }
  | {
      type: 'autokernel-result';
      id: number;
      served: string;
      tile: TileParams;
      /** The served config's staging (coopmat op). */
      staging?: CoopmatStaging;
      verdict: Verdict;
      msPerDispatch?: number;
      /** Why a cached winner that was offered did not serve (unparsable, infeasible, rejected here). */
      fallback?: string;
    }
  | { type: 'cancelled'; id: number }
  | { type: 'error'; id: number; kind: 'shape' | 'validation' | 'unsupported' | 'internal'; message: string }
  | { type: 'device-lost'; reason: string; message: string };

export type KernelIdList = readonly KernelId[];

/** Typed arrays inside a response, for postMessage's transfer list. */
export function transferablesOf(msg: WorkerResponse): Transferable[] {
  const out: Transferable[] = [];
  const add = (a: ArrayBufferView | undefined) => {
    if (a && a.buffer instanceof ArrayBuffer && !out.includes(a.buffer)) out.push(a.buffer);
  };
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
