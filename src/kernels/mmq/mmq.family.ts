// The dense MMQ kernel families: each is a preset of the one generator (MmqSpec) plus the seed's
// launch shape, data and gate, behind the KernelFamily contract the worker, tuner and bench share.
import type { Gate } from '../compare';
import {
  assertNoProblems,
  type KernelFamily,
  type KernelId,
  type OwnershipPhase,
  type PreparedProblem,
  type ProblemConfig,
  type TileParams,
} from '../family';
import type { AdapterCaps, Arm } from '../gpu/caps';
import { emptyOwnership, type OwnershipMap } from '../gpu/instrument';
import type { KernelPlan } from '../gpu/plan';
import { fullPrecisionOf, mmqDataset, mmqWeightBytes, type MmqDataset } from './mmq.data';
import { mmqQ4kRef, mmqQ8Ref } from './mmq.oracle';
import {
  buildMmqPlan,
  mmqAnalyticOwnership,
  mmqCapsProblems,
  mmqShapeProblems,
  OWNER_BUFFER,
} from './mmq.plan';
import { buildMmqKernel, MMQ_BLK_TILE, mmqSpecProblems, type MmqKernel, type MmqSpec } from './mmq.wgsl';

export type MmqKernelId =
  'mmq-q8-naive' | 'mmq-q8-tiled' | 'mmq-q4k-blk' | 'mmq-q4k-rt' | 'mmq-q4k-tile' | 'moe-q4k-id';

export interface MmqPresetOptions {
  m: number;
  n: number;
  k: number;
  /** Used by 'mmq-q4k-tile' only; the other kernels have the seed's fixed tile. */
  tile?: TileParams;
  arm: Arm;
  plane: number;
}

/** What a preset fixes (arm, plane and the static shape come from MmqPresetOptions). */
type MmqPreset = [
  weights: MmqSpec['weights'],
  tile: TileParams,
  staging: MmqSpec['staging'],
  accumulator: MmqSpec['accumulator'],
  dims: MmqSpec['dims']['kind'],
  tails: boolean,
  indexed: boolean,
];

const ONE_PLANE_TILE: TileParams = { wm: 1, wn: 1, rm: 1, rn: 1 };

// prettier-ignore
const PRESETS: Readonly<Record<MmqKernelId, MmqPreset>> = {
  //              weights tile            staging   accumulator dims       tails  indexed
  'mmq-q8-naive': ['q8_0', ONE_PLANE_TILE, 'global', 'shared',   'static',  false, false],
  'mmq-q8-tiled': ['q8_0', MMQ_BLK_TILE,   'shared', 'shared',   'static',  false, false],
  'mmq-q4k-blk':  ['q4k',  MMQ_BLK_TILE,   'shared', 'shared',   'static',  false, false],
  'mmq-q4k-rt':   ['q4k',  MMQ_BLK_TILE,   'shared', 'shared',   'runtime', true,  false],
  'mmq-q4k-tile': ['q4k',  MMQ_BLK_TILE,   'shared', 'register', 'static',  true,  false], // tile: a knob
  'moe-q4k-id':   ['q4k',  MMQ_BLK_TILE,   'shared', 'shared',   'runtime', true,  true],
};

/**
 * The seed kernels as presets of MmqSpec:
 *   mmq-q8-naive  = mmq_q8_wmma       q8_0, one plane, 16x16, operands from global, static dims
 *   mmq-q8-tiled  = mmq_q8_wmma_blk   q8_0, 2x4 planes (32x64), A/B staged to shared, static dims
 *   mmq-q4k-blk   = mmq_q4k_wmma_blk  q4k, 32x64, static dims, no tails
 *   mmq-q4k-rt    = mmq_q4k_wmma_rt   q4k, 32x64, runtime dims + tails (one pipeline, every shape)
 *   mmq-q4k-tile  = mmq_q4k_wmma_tile q4k, (wm,wn,rm,rn), static dims + tails, register accumulator
 *   moe-q4k-id    = mmq_q4k_id        q4k, 32x64, runtime + tails + expert-indexed
 * @example buildMmqKernel(mmqPresetSpec('mmq-q4k-rt', { m: 17, n: 50, k: 512, arm: 'scalar', plane: 4 }))
 */
export function mmqPresetSpec(id: MmqKernelId, o: MmqPresetOptions): MmqSpec {
  const [weights, tile, staging, accumulator, dims, tails, indexed] = PRESETS[id];
  // Keys in the order the specs were always written (arm, plane, indexed first): serialized specs stay equal.
  return {
    arm: o.arm,
    plane: o.plane,
    indexed,
    weights,
    tile: id === 'mmq-q4k-tile' ? (o.tile ?? tile) : tile,
    staging,
    accumulator,
    dims: dims === 'runtime' ? { kind: 'runtime' } : { kind: 'static', m: o.m, n: o.n, k: o.k },
    tails,
  };
}

/** The phases of a spec: the opaque fragment store (matrix arm), the scalar epilogue, the register accumulator. */
export function mmqPhases(spec: MmqSpec): OwnershipPhase[] {
  const phases: OwnershipPhase[] = [];
  if (spec.arm === 'subgroup-matrix') phases.push('fragment-store');
  phases.push('scalar-epilogue');
  if (spec.accumulator === 'register') phases.push('register-accumulator');
  return phases;
}

/** Phases whose element<->lane map is opaque (the subgroup-matrix fragment): their analytic map is all count 0. */
export function mmqOpaquePhases(spec: MmqSpec): OwnershipPhase[] {
  return spec.arm === 'subgroup-matrix' ? ['fragment-store'] : [];
}

/** A prepared MMQ problem: the PreparedProblem contract plus the spec, kernel and data behind it. */
export interface MmqPreparedProblem extends PreparedProblem {
  spec: MmqSpec;
  kernel: MmqKernel;
  dataset: MmqDataset;
  /** Phases listed in `phases` whose analytic map is unknown (count 0 everywhere): the matrix fragment store. */
  opaquePhases: OwnershipPhase[];
}

/** Memoize a thunk (oracles are costly and called by several consumers). */
export function once<T>(fn: () => T): () => T {
  let v: T | undefined;
  let done = false;
  return () => {
    if (!done) {
      v = fn();
      done = true;
    }
    return v as T;
  };
}

/** An ownership accessor over the phases a spec has; opaque phases answer an all-zero map. */
export function ownershipAccessor(
  spec: MmqSpec,
  rows: number,
  cols: number,
  analytic: () => OwnershipMap,
): (phase: OwnershipPhase) => OwnershipMap {
  const phases = mmqPhases(spec);
  const opaque = mmqOpaquePhases(spec);
  return (phase) => {
    if (!phases.includes(phase))
      throw new RangeError(`phase ${phase} does not occur in this kernel (${phases.join(', ')})`);
    return opaque.includes(phase) ? emptyOwnership(rows, cols) : analytic();
  };
}

interface DenseDef {
  id: Exclude<MmqKernelId, 'moe-q4k-id'>;
  title: string;
  summary: string;
  seedName: string;
  /** The default problem (m x n x k); the other defaults are shared. */
  shape: { m: number; n: number; k: number };
  /** The knobs a user can turn: m, n, k unless stated. */
  knobs?: KernelFamily['knobs'];
  /** The seed's gate for this kernel: rel_to_max < 1e-6 unless stated. */
  gate?: Gate;
}

const ARMS_ALL: readonly Arm[] = ['scalar', 'dp4a', 'subgroup-matrix'];
const REL_1E6: Gate = { kind: 'rel-to-max', tol: 1e-6 };

const baseDefaults = {
  experts: 1,
  topk: 1,
  ytiles: 1,
  tile: MMQ_BLK_TILE,
  dataSource: 'seed' as const,
  dataSeed: 0,
};

function specOf(def: DenseDef, c: ProblemConfig): MmqSpec {
  return mmqPresetSpec(def.id, { m: c.m, n: c.n, k: c.k, tile: c.tile, arm: c.arm, plane: c.plane });
}

function bufferProblems(c: ProblemConfig, caps: AdapterCaps, wrows: number): string[] {
  const max = caps.limits.maxStorageBufferBindingSize;
  const p: string[] = [];
  const check = (name: string, bytes: number) => {
    if (bytes > max) p.push(`${name} is ${bytes} B > maxStorageBufferBindingSize ${max}`);
  };
  check('activation xq', c.m * c.k);
  check('weight', wrows * c.k);
  check('output', c.m * c.n * 4 * 3); // the owner debug buffer holds 3 words per element
  return p;
}

function denseFamily(def: DenseDef): KernelFamily {
  const validate = (c: ProblemConfig, caps: AdapterCaps): string[] => {
    const spec = specOf(def, c);
    const all = [
      ...mmqSpecProblems(spec),
      ...mmqCapsProblems(spec, caps),
      ...mmqShapeProblems(spec, c.m, c.n, c.k, caps.limits.maxComputeWorkgroupsPerDimension),
      ...bufferProblems(c, caps, c.n),
    ];
    return [...new Set(all)];
  };
  return {
    id: def.id as KernelId,
    title: def.title,
    summary: def.summary,
    seedName: def.seedName,
    arms: ARMS_ALL,
    knobs: def.knobs ?? ['m', 'n', 'k'],
    defaults: { ...baseDefaults, ...def.shape },
    validate,
    prepare(c, caps): MmqPreparedProblem {
      assertNoProblems(validate(c, caps));
      const spec = specOf(def, c);
      const dataset = mmqDataset(spec.weights, c.m, c.n, c.k, c.dataSource, c.dataSeed);
      const plan: KernelPlan = buildMmqPlan(dataset.inputs, c.m, c.n, c.k, spec, { label: def.id });
      const instrumentedPlan = buildMmqPlan(dataset.inputs, c.m, c.n, c.k, spec, {
        label: `${def.id} (instrumented)`,
        instrument: true,
      });
      const inputs = dataset.inputs;
      const kernel = buildMmqKernel(spec);
      const oracle = once(() =>
        inputs.weights === 'q8_0'
          ? mmqQ8Ref(inputs.data, c.m, c.n, c.k)
          : mmqQ4kRef(inputs.data, c.m, c.n, c.k),
      );
      return {
        config: c,
        plan,
        instrumentedPlan,
        ownerBuffer: OWNER_BUFFER,
        rows: c.m,
        cols: c.n,
        oracle,
        fullPrecision: once(() => fullPrecisionOf(dataset, c.n)),
        gate: def.gate ?? REL_1E6,
        phases: mmqPhases(spec),
        analyticOwnership: ownershipAccessor(
          spec,
          c.m,
          c.n,
          once(() => mmqAnalyticOwnership(spec, c.m, c.n)),
        ),
        ops: 2 * c.m * c.n * c.k,
        weightBytes: mmqWeightBytes(spec.weights, c.n, c.k),
        spec,
        kernel,
        outputTile: { rows: kernel.geometry.bm, cols: kernel.geometry.bn },
        dataset,
        opaquePhases: mmqOpaquePhases(spec),
      };
    },
  };
}

export const mmqQ8NaiveFamily = denseFamily({
  id: 'mmq-q8-naive',
  title: 'Q8_0 MMQ, naive (one plane per 16x16)',
  summary:
    'Q8_0 x q8_1 -> f32 block-scaled GEMM, one plane per 16x16 tile reading global memory: twin of mmq_q8_wmma.',
  seedName: 'mmq_q8_wmma',
  shape: { m: 64, n: 64, k: 256 },
  // The seed's oracle gate: int8 sums are exact and the f32 scale accumulates in the oracle's order.
  gate: { kind: 'bit-exact' },
});

export const mmqQ8TiledFamily = denseFamily({
  id: 'mmq-q8-tiled',
  title: 'Q8_0 MMQ, tiled 32x64',
  summary:
    'Q8_0 x q8_1 GEMM with A/B staged to workgroup memory once per 32-block, 8 planes: twin of mmq_q8_wmma_blk.',
  seedName: 'mmq_q8_wmma_blk',
  shape: { m: 64, n: 128, k: 256 },
});

export const mmqQ4kBlkFamily = denseFamily({
  id: 'mmq-q4k-blk',
  title: 'Q4_K MMQ, fixed 32x64',
  summary:
    'Affine Q4_K x q8_1 GEMM, nibbles decoded in-kernel, acc += xs*D*dot - M*xsum: twin of mmq_q4k_wmma_blk.',
  seedName: 'mmq_q4k_wmma_blk',
  shape: { m: 64, n: 128, k: 512 },
});

export const mmqQ4kRtFamily = denseFamily({
  id: 'mmq-q4k-rt',
  title: 'Q4_K MMQ, runtime dims + tails',
  summary:
    'The Q4_K MMQ with m/n/k in a uniform and m/n tail guards: one pipeline for every shape. Twin of mmq_q4k_wmma_rt.',
  seedName: 'mmq_q4k_wmma_rt',
  shape: { m: 50, n: 100, k: 512 },
});

export const mmqQ4kTileFamily = denseFamily({
  id: 'mmq-q4k-tile',
  title: 'Q4_K MMQ, tunable tile',
  summary:
    'Q4_K MMQ with a (wm,wn,rm,rn) tile and a register accumulator held across K: twin of mmq_q4k_wmma_tile.',
  seedName: 'mmq_q4k_wmma_tile',
  shape: { m: 64, n: 128, k: 512 },
  knobs: ['m', 'n', 'k', 'tile'],
});

/** The dense MMQ families, in seed order. */
export const mmqFamilies: KernelFamily[] = [
  mmqQ8NaiveFamily,
  mmqQ8TiledFamily,
  mmqQ4kBlkFamily,
  mmqQ4kRtFamily,
  mmqQ4kTileFamily,
];
