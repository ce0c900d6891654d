// The contract every kernel family implements, so the worker, the tuner, the bench and the tests can
// drive any family the same way: a config in, a prepared problem (plan + oracle + gate + ownership) out.
import type { Gate } from './compare';
import type { AdapterCaps, Arm } from './gpu/caps';
import type { OwnershipMap } from './gpu/instrument';
import type { KernelPlan } from './gpu/plan';

export type KernelId =
  | 'hello-wmma'
  | 'hello-mma'
  | 'mmq-q8-naive'
  | 'mmq-q8-tiled'
  | 'mmq-q4k-blk'
  | 'mmq-q4k-rt'
  | 'mmq-q4k-tile'
  | 'moe-q4k-id'
  | 'coopmat-f16';

export interface TileParams {
  wm: number;
  wn: number;
  rm: number;
  rn: number;
}

export type DataSource = 'seed' | 'random';

/**
 * How coopmat-f16 stages its operands (its ProblemConfig.staging):
 *   - 'one-pass': one kernel decodes Q4_K and rounds x to f16 in its workgroup tiles (the seed's layout);
 *   - 'prepass': the split plan: a weight pre-pass (Q4_K -> f16), an activation pre-pass (f16 fragment
 *     tiles), then the GEMM;
 *   - 'fused-prepass': the same with both pre-passes in one dispatch;
 *   - 'in-gemm': no weight pre-pass, the GEMM's stage decodes B from the Q4_K words.
 * On the H200 'prepass' is fastest at m >= 512, 'in-gemm' at 4 of the 6 shapes with m <= 128
 * (docs/benchmarks.md, "Follow-up 8"), so the tuner searches it with the tile.
 */
export const COOPMAT_STAGINGS = ['one-pass', 'prepass', 'fused-prepass', 'in-gemm'] as const;
export type CoopmatStaging = (typeof COOPMAT_STAGINGS)[number];

/** Everything that determines a run; this is what a permalink encodes (plus edited WGSL). */
export interface ProblemConfig {
  kernel: KernelId;
  m: number;
  n: number;
  k: number;
  /** MoE: number of experts and experts per token (slots = m * topk); ignored by other families. */
  experts: number;
  topk: number;
  /** MoE grid-stride: row tiles per expert in the grid (>= 1). */
  ytiles: number;
  tile: TileParams;
  /** coopmat-f16 only: its staging; absent = the arm's default ('prepass' for the matrix arm, else 'one-pass'). */
  staging?: CoopmatStaging;
  arm: Arm;
  /** Logical plane width the kernel partitions by (defaults to the adapter's subgroup size). */
  plane: number;
  dataSource: DataSource;
  /** 0 = the seed's own generator constant; otherwise a different stream. */
  dataSeed: number;
}

/** A phase of a kernel that assigns output elements to lanes (for the ownership view). */
export type OwnershipPhase = 'fragment-store' | 'scalar-epilogue' | 'register-accumulator';

export interface PreparedProblem {
  config: ProblemConfig;
  plan: KernelPlan;
  /** The same plan with the ownership-recording suffix and the `owner` debug buffer. */
  instrumentedPlan: KernelPlan;
  /** Name of the owner debug buffer in `instrumentedPlan`. */
  ownerBuffer: string;
  /** Logical output [rows, cols] (m x n; slots x n for MoE). */
  rows: number;
  cols: number;
  /** Exact CPU oracle of what the kernel computes (the quantized reference). */
  oracle(): Float32Array | Int32Array;
  /** f32 GEMM on dequantized weights and the unquantized activation, where one exists (error split). */
  fullPrecision?(): Float32Array;
  gate: Gate;
  /** Phases that own output elements, and the analytic owner of each element per phase. */
  phases: OwnershipPhase[];
  analyticOwnership(phase: OwnershipPhase): OwnershipMap;
  /** int8 (or f16) multiply-adds the main pass performs: 2*m*n*k for TOPS. */
  ops: number;
  /** Bytes of weight the main pass reads once (for GB/s). */
  weightBytes: number;
  /**
   * The output tile one workgroup covers (BM x BN) when the grid tiles the output: the views draw the
   * tile grid and hatch its overhang past rows/cols as the tail. Absent: derived from the ownership.
   */
  outputTile?: { rows: number; cols: number };
}

export interface KernelFamily {
  id: KernelId;
  title: string;
  /** One line on what it computes and which seed kernel it twins. */
  summary: string;
  seedName: string;
  /** The arms this family has (each gated by the adapter at run time). */
  arms: readonly Arm[];
  /** Which config fields the UI should offer. */
  knobs: readonly ('m' | 'n' | 'k' | 'tile' | 'staging' | 'experts' | 'topk' | 'ytiles')[];
  /** Fixed shape (hello kernels) or defaults. */
  defaults: Omit<ProblemConfig, 'kernel' | 'arm' | 'plane'>;
  /** Why this config cannot run here: shape preconditions, arm availability, limits. Empty = fine. */
  validate(config: ProblemConfig, caps: AdapterCaps): string[];
  /** Build inputs, plan and oracle. Throws ShapeError (with the validate() message) on bad input. */
  prepare(config: ProblemConfig, caps: AdapterCaps): PreparedProblem;
}

/** A config that breaks a kernel's preconditions, rejected before any dispatch. */
export class ShapeError extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = 'ShapeError';
  }
}

/**
 * `name = v must be a positive integer` for every entry that is not one. `isInteger` defaults to
 * Number.isInteger; pass Number.isSafeInteger where the value sizes a host allocation directly.
 * @example positiveIntegerProblems({ m: 0, n: 16 }) // ['m = 0 must be a positive integer']
 */
export function positiveIntegerProblems(
  values: Readonly<Record<string, number>>,
  isInteger: (v: number) => boolean = Number.isInteger,
): string[] {
  return Object.entries(values)
    .filter(([, v]) => !isInteger(v) || v < 1)
    .map(([name, v]) => `${name} = ${v} must be a positive integer`);
}

/**
 * Why a config's data choice is invalid: an unknown source, or a dataSeed that is not a non-negative
 * safe integer (the xorshift stream's seed). Empty = fine.
 * @example dataSourceProblems({ ...config, dataSeed: -1 }) // ['dataSeed -1 must be a non-negative integer']
 */
export function dataSourceProblems(config: Pick<ProblemConfig, 'dataSource' | 'dataSeed'>): string[] {
  const p: string[] = [];
  if (config.dataSource !== 'seed' && config.dataSource !== 'random')
    p.push(`unknown data source '${String(config.dataSource)}'`);
  if (!Number.isSafeInteger(config.dataSeed) || config.dataSeed < 0)
    p.push(`dataSeed ${config.dataSeed} must be a non-negative integer`);
  return p;
}

/**
 * Throw ShapeError with every problem, joined, when the list is non-empty (before any dispatch).
 * @example assertNoProblems([...specProblems, ...shapeProblems])
 */
export function assertNoProblems(problems: readonly string[]): void {
  if (problems.length) throw new ShapeError(problems.join('; '));
}
