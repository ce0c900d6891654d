// What the app knows of the dense int8 MMQ families before any WGSL exists: each is a preset of the one
// MMQ generator (mmq.wgsl.ts) with the reference's tile, operands and dims, and its controls, steps and
// rules. Light: no generator, oracle or quant code (see ../family.ts).
import { armPlaneProblems, DP4A_ARM, int8MatrixArm, SCALAR_ARM } from '../arms';
import type { AdapterCaps } from '../gpu/caps';
import { multipleProblem, shapeControl } from '../controls';
import {
  ARM_KNOB,
  controlProblems,
  dataProblems,
  type ConformanceCheck,
  type ControlDecl,
  type FamilyCatalog,
  type RunConfig,
} from '../family';
import { denseGemmWork } from '../work';
import {
  REGISTER_TILE,
  TILE_CONSTRAINTS,
  TILE_KEYS,
  tileControls,
  tileGeometry,
  tileOf,
  type TileParams,
} from '../tile';

export type MmqKernelId =
  'mmq-q8-naive' | 'mmq-q8-tiled' | 'mmq-q4k-blk' | 'mmq-q4k-rt' | 'mmq-q4k-tile' | 'mmq-q4k-id';
export type MmqWeights = 'q8_0' | 'q4k';
/**
 * Where the contraction reads its operands: 'global' straight from storage (the naive one-plane kernel),
 * 'shared' A and B staged to workgroup memory once per 32-block.
 */
export type MmqOperands = 'global' | 'shared';
/** Where the f32 output accumulator lives across the K loop: workgroup memory (the fixed kernels) or registers (the tile kernel). */
export type MmqAccumulator = 'shared' | 'register';
/**
 * How the tile kernel schedules its tile: the seed's (each lane a slice of every 16x16 subtile, one
 * 32-block a step) or micro-tiles (each lane a block of rows x columns in registers, 64-wide
 * double-buffered stages, the scales staged once a stage): the same math, bit for bit.
 */
export type MmqSchedule = 'subtile' | 'microtile';
export const MMQ_SCHEDULES: readonly MmqSchedule[] = ['subtile', 'microtile'];

/** The tile kernel's schedule control (the tuner searches it with the tile). */
export const SCHEDULE_CONTROL: ControlDecl = {
  kind: 'choice',
  key: 'schedule',
  label: 'schedule',
  group: 'tile',
  hint: "the seed's one 32-block a step, or 64-wide double-buffered stages with the scales staged once (lane micro-tiles on the scalar and dp4a arms)",
  // Configs stored and linked before the schedule existed ran the seed's.
  optional: true,
  tune: { name: 'SCHED' },
  options: [
    { value: 'subtile', label: "subtile (the seed's)" },
    { value: 'microtile', label: 'micro-tile' },
  ],
};

/** The reference's tile of the fixed kernels: 32x64 output tile, 8 planes (2 x 4 subtiles, one per plane). */
export const MMQ_BLK_TILE: TileParams = { wm: 2, wn: 4, rm: 1, rn: 1 };
const ONE_PLANE_TILE: TileParams = { wm: 1, wn: 1, rm: 1, rn: 1 };

/** What a preset fixes (arm, plane and the shape come from the config). */
export interface MmqPreset {
  weights: MmqWeights;
  /** The fixed tile; the tile kernel takes its tile from the config instead. */
  tile: TileParams;
  tileIsParam: boolean;
  operands: MmqOperands;
  accumulator: MmqAccumulator;
  dims: 'static' | 'runtime';
  tails: boolean;
  indexed: boolean;
}

const preset = (
  weights: MmqWeights,
  tile: TileParams,
  operands: MmqOperands,
  accumulator: MmqAccumulator,
  dims: 'static' | 'runtime',
  tails: boolean,
  indexed = false,
  tileIsParam = false,
): MmqPreset => ({ weights, tile, tileIsParam, operands, accumulator, dims, tails, indexed });

/**
 * The reference kernels as presets of the one generator:
 *   mmq-q8-naive  = mmq_q8_wmma       q8_0, one plane, 16x16, operands from global, static dims
 *   mmq-q8-tiled  = mmq_q8_wmma_blk   q8_0, 2x4 planes (32x64), A/B staged to shared, static dims
 *   mmq-q4k-blk   = mmq_q4k_wmma_blk  q4k, 32x64, static dims, no tails
 *   mmq-q4k-rt    = mmq_q4k_wmma_rt   q4k, 32x64, runtime dims + tails (one pipeline, every shape)
 *   mmq-q4k-tile  = mmq_q4k_wmma_tile q4k, (wm,wn,rm,rn), static dims + tails, register accumulator
 *   mmq-q4k-id    = mmq_q4k_id        q4k, 32x64, runtime + tails + expert-indexed
 */
export const MMQ_PRESETS: Readonly<Record<MmqKernelId, MmqPreset>> = {
  'mmq-q8-naive': preset('q8_0', ONE_PLANE_TILE, 'global', 'shared', 'static', false),
  'mmq-q8-tiled': preset('q8_0', MMQ_BLK_TILE, 'shared', 'shared', 'static', false),
  'mmq-q4k-blk': preset('q4k', MMQ_BLK_TILE, 'shared', 'shared', 'static', false),
  'mmq-q4k-rt': preset('q4k', MMQ_BLK_TILE, 'shared', 'shared', 'runtime', true),
  'mmq-q4k-tile': preset('q4k', MMQ_BLK_TILE, 'shared', 'register', 'static', true, false, true),
  'mmq-q4k-id': preset('q4k', MMQ_BLK_TILE, 'shared', 'shared', 'runtime', true, true),
};

/** The K block of a weight format: 32 for Q8_0, the 256 super-block for Q4_K. */
export const blockOf = (weights: MmqWeights): number => (weights === 'q8_0' ? 32 : 256);
export const blockName = (weights: MmqWeights): string =>
  weights === 'q8_0' ? 'the Q8_0 block' : 'the Q4_K super-block';

/** The int8 matrix arm of the MMQ kernels: i8 -> i32 fragments of 16x16x32. */
export const MMQ_ARMS = [SCALAR_ARM, DP4A_ARM, int8MatrixArm(() => [16, 16, 32])] as const;

/** The tile a preset runs for these params (its own, or the params' for the tile kernel). */
export function presetTile(p: MmqPreset, params: RunConfig['params']): TileParams {
  return p.tileIsParam ? tileOf(params) : p.tile;
}

interface DenseDef {
  id: Exclude<MmqKernelId, 'mmq-q4k-id'>;
  title: string;
  summary: string;
  reference: string;
  shape: { m: number; n: number; k: number };
  /** FamilyCatalog.small. */
  small: { m: number; n: number; k: number };
  /** Conformance shapes (FamilyCatalog.checks). */
  checks: ConformanceCheck[];
}

function denseCatalog(def: DenseDef): FamilyCatalog {
  const p = MMQ_PRESETS[def.id];
  const block = blockOf(p.weights);
  // Without tail guards m and n step by the block tile (BM x BN), which the tile kernel's params set.
  const geometry = (params: RunConfig['params']) => tileGeometry(presetTile(p, params));
  const controls: ControlDecl[] = [
    shapeControl('m', 'm', { step: (q) => (p.tails ? 1 : geometry(q).bm), hint: 'activation rows (tokens)' }),
    shapeControl('n', 'n', {
      step: (q) => (p.tails ? 1 : geometry(q).bn),
      hint: 'weight rows (output features)',
    }),
    shapeControl('k', 'k', {
      min: block,
      step: () => block,
      hint: `the reduction; a multiple of ${block} (${blockName(p.weights)})`,
    }),
    ...(p.tileIsParam ? [...tileControls([1, 2, 4]), SCHEDULE_CONTROL] : []),
  ];
  const catalog: FamilyCatalog = {
    id: def.id,
    title: def.title,
    summary: def.summary,
    reference: def.reference,
    arithmetic: 'int8',
    arms: MMQ_ARMS,
    controls,
    takes: { format: p.weights === 'q8_0' ? 'Q8_0' : 'Q4_K', bank: false, rows: 'm' },
    work: denseGemmWork(p.weights === 'q8_0' ? 'Q8_0' : 'Q4_K', 1, block),
    defaults: { ...def.shape, ...(p.tileIsParam ? { ...MMQ_BLK_TILE, schedule: 'subtile' } : {}) },
    small: def.small,
    ...(p.tileIsParam ? { tile: REGISTER_TILE } : {}),
    checks: def.checks,
    validate(config: RunConfig, caps?: AdapterCaps) {
      const q = config.params;
      const out = controlProblems(controls, q);
      out.push(...multipleProblem('k', q.k, block, blockName(p.weights)));
      if (!p.tails && !out.length) {
        const { bm, bn } = geometry(q);
        out.push(
          ...multipleProblem('m', q.m, bm, `the ${bm}-row output tile: this kernel has no tail guards`),
        );
        out.push(
          ...multipleProblem('n', q.n, bn, `the ${bn}-column output tile: this kernel has no tail guards`),
        );
      }
      return [...out, ...armPlaneProblems(catalog, config, caps), ...dataProblems(config.data, catalog)];
    },
    ...(def.id === 'mmq-q4k-tile'
      ? {
          tuning: {
            op: 'mmq_q4k_tile',
            label: 'int8 MMQ Q4_K tile (mmq_q4k_tile)',
            knobs: [...TILE_KEYS, 'schedule', ARM_KNOB],
            constraints: TILE_CONSTRAINTS,
          },
        }
      : {}),
  };
  return catalog;
}

export const mmqQ8NaiveCatalog = denseCatalog({
  id: 'mmq-q8-naive',
  title: 'Q8_0 MMQ, naive (one plane per 16x16)',
  summary:
    'Q8_0 x q8_1 -> f32 block-scaled GEMM, one plane per 16x16 tile reading global memory: twin of mmq_q8_wmma.',
  reference: 'mmq_q8_wmma',
  shape: { m: 64, n: 64, k: 256 },
  small: { m: 32, n: 32, k: 64 },
  checks: [
    { label: 'one 16x16 tile', params: { m: 16, n: 16, k: 64 } },
    { label: 'a 3 x 5 grid (m x n tiles), k 8 blocks', params: { m: 48, n: 80, k: 256 } },
  ],
});

export const mmqQ8TiledCatalog = denseCatalog({
  id: 'mmq-q8-tiled',
  title: 'Q8_0 MMQ, tiled 32x64',
  summary:
    'Q8_0 x q8_1 GEMM with A/B staged to workgroup memory once per 32-block, 8 planes: twin of mmq_q8_wmma_blk.',
  reference: 'mmq_q8_wmma_blk',
  shape: { m: 64, n: 128, k: 256 },
  small: { m: 32, n: 64, k: 64 },
  checks: [
    { label: 'one 32x64 tile', params: { m: 32, n: 64, k: 128 } },
    { label: 'a 3 x 3 grid', params: { m: 96, n: 192, k: 96 } },
  ],
});

export const mmqQ4kBlkCatalog = denseCatalog({
  id: 'mmq-q4k-blk',
  title: 'Q4_K MMQ, fixed 32x64',
  summary:
    'Affine Q4_K x q8_1 GEMM, nibbles decoded in-kernel, acc += xs*D*dot - M*xsum: twin of mmq_q4k_wmma_blk.',
  reference: 'mmq_q4k_wmma_blk',
  shape: { m: 64, n: 128, k: 512 },
  small: { m: 32, n: 64, k: 256 },
  checks: [
    { label: 'one 32x64 tile', params: { m: 32, n: 64, k: 256 } },
    { label: 'a 2 x 3 grid, two super-blocks', params: { m: 64, n: 192, k: 512 } },
  ],
});

export const mmqQ4kRtCatalog = denseCatalog({
  id: 'mmq-q4k-rt',
  title: 'Q4_K MMQ, runtime dims + tails',
  summary:
    'The Q4_K MMQ with m/n/k in a uniform and m/n tail guards: one pipeline for every shape. Twin of mmq_q4k_wmma_rt.',
  reference: 'mmq_q4k_wmma_rt',
  shape: { m: 50, n: 100, k: 512 },
  small: { m: 17, n: 50, k: 256 },
  checks: [
    { label: 'm and n tails in one tile', params: { m: 17, n: 50, k: 512 } },
    { label: 'one row', params: { m: 1, n: 64, k: 256 } },
    { label: 'a 4 x 5 grid with m and n tails', params: { m: 100, n: 300, k: 256 } },
  ],
});

export const mmqQ4kTileCatalog = denseCatalog({
  id: 'mmq-q4k-tile',
  title: 'Q4_K MMQ, tunable tile',
  summary:
    'Q4_K MMQ with a (wm,wn,rm,rn) tile and a register accumulator held across K: twin of mmq_q4k_wmma_tile.',
  reference: 'mmq_q4k_wmma_tile',
  shape: { m: 64, n: 128, k: 512 },
  small: { m: 20, n: 40, k: 256 },
  checks: [
    { label: 'the 32x64 tile, m and n tails', params: { m: 17, n: 50, k: 512 } },
    {
      label: 'tile (2,2,2,2): a 2 x 5 grid with tails',
      params: { m: 100, n: 300, k: 256, wm: 2, wn: 2, rm: 2, rn: 2 },
    },
    {
      label: 'tile (1,1,1,1): a 4 x 8 grid of 16x16',
      params: { m: 64, n: 128, k: 256, wm: 1, wn: 1, rm: 1, rn: 1 },
    },
    {
      label: 'tile (1,2,2,1): a 3 x 3 grid with tails',
      params: { m: 80, n: 90, k: 256, wm: 1, wn: 2, rm: 2, rn: 1 },
    },
    {
      label: 'micro-tile, tile (2,2,1,2): a 3 x 5 grid with tails, four super-blocks',
      params: { m: 37, n: 70, k: 1024, wm: 2, wn: 2, rm: 1, rn: 2, schedule: 'microtile' },
    },
    {
      label: 'micro-tile, tile (1,2,2,1): one row',
      params: { m: 1, n: 64, k: 256, wm: 1, wn: 2, rm: 2, rn: 1, schedule: 'microtile' },
    },
  ],
});

/** The dense MMQ catalogs, in the reference's order. */
export const MMQ_CATALOGS: readonly FamilyCatalog[] = [
  mmqQ8NaiveCatalog,
  mmqQ8TiledCatalog,
  mmqQ4kBlkCatalog,
  mmqQ4kRtCatalog,
  mmqQ4kTileCatalog,
];
