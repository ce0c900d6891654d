// The f32 baseline GEMM's only public entry: generator, plan, oracles, and the baseline as a family the
// bench runs beside the product's (ratio (a): the quantized kernels against plain f32). Not in the
// registries: the app does not offer it.
import { SCALAR_ARM } from '../gpu/arms';
import { planLimitProblems } from '../gpu/plan';
import { shapeControl } from '../controls';
import {
  assertNoProblems,
  choiceParam,
  controlProblems,
  intParam,
  type BuiltProblem,
  type ControlDecl,
  type KernelFamily,
} from '../family';
import { DatasetMemo } from '../memo';
import { fastActivation } from '../quant/synthetic';
import { gemmF32AnalyticOwnership, gemmF32Plan, GEMM_OWNER_BUFFER } from './gemm.plan';
import { gemmF32RefAt } from './gemm.oracle';
import type { GemmF32Tile } from './gemm.wgsl';

export {
  buildGemmF32Kernel,
  GEMM_F32_BINDINGS,
  GEMM_F32_DEFAULT_TILE,
  GEMM_F32_SMALL_TILE,
  gemmF32Geometry,
  gemmF32ShapeProblems,
  gemmF32TileProblems,
  gemmF32Wgsl,
  type GemmF32Kernel,
  type GemmF32Tile,
} from './gemm.wgsl';
export { gemmF32AnalyticOwnership, gemmF32Dims, gemmF32Plan, GEMM_OWNER_BUFFER } from './gemm.plan';
export { gemmF32Ref, gemmF32RefAt } from './gemm.oracle';

/** The baseline's tiles as the bench names them: BMxBNxBK/TMxTN. */
export const GEMM_F32_TILES = [
  '128x128x16/8x8',
  '64x128x16/4x8',
  '128x64x16/8x4',
  '32x32x16/4x4',
  '16x16x8/2x2',
] as const;

/** A tile name as a tile. */
export function gemmF32TileOf(name: string): GemmF32Tile {
  const [bm, bn, bk, tm, tn] = name.split(/[x/]/).map(Number) as [number, number, number, number, number];
  return { bm, bn, bk, tm, tn };
}

const controls: ControlDecl[] = [
  shapeControl('m', 'm'),
  shapeControl('n', 'n'),
  shapeControl('k', 'k'),
  {
    kind: 'choice',
    key: 'tile',
    label: 'tile',
    group: 'tile',
    options: GEMM_F32_TILES.map((value) => ({ value, label: value })),
  },
];

const memo = new DatasetMemo<{ x: Float32Array; w: Float32Array }>();

/** The f32 tiled GEMM out = x @ w^T on random f32 operands, gated scale-relatively against f64. */
export const gemmF32BaselineFamily: KernelFamily = {
  id: 'gemm-f32',
  title: 'f32 tiled GEMM (baseline)',
  summary:
    'Plain f32 register-tiled GEMM out = x @ W^T: the bench baseline the quantized kernels are compared with.',
  reference: '-',
  arithmetic: 'f16',
  arms: [{ ...SCALAR_ARM, label: 'f32' }],
  controls,
  defaults: { m: 64, n: 64, k: 128, tile: '32x32x16/4x4' },
  validate: (config) => controlProblems(controls, config.params),
  build(config, caps): BuiltProblem {
    assertNoProblems(controlProblems(controls, config.params));
    const [m, n, k] = ['m', 'n', 'k'].map((key) => intParam(config.params, key)) as [number, number, number];
    const tile = gemmF32TileOf(choiceParam(config.params, 'tile', GEMM_F32_TILES));
    const data = () =>
      memo.get(JSON.stringify([m, n, k, config.data.seed]), () => ({
        x: fastActivation(m, k, 2 * config.data.seed + 11),
        w: fastActivation(n, k, 2 * config.data.seed + 12),
      }));
    const plan = gemmF32Plan(data, m, n, k, tile, caps);
    assertNoProblems(planLimitProblems(plan, caps.limits));
    return {
      config,
      plan,
      instrumentedPlan: () => gemmF32Plan(data, m, n, k, tile, caps, { instrument: true }),
      ownerBuffer: GEMM_OWNER_BUFFER,
      facts: {
        rows: m,
        cols: n,
        oracle: (rows) => {
          const list = rows ?? Array.from({ length: m }, (_, i) => i);
          const idx = list.flatMap((r) => Array.from({ length: n }, (_, j) => r * n + j));
          return gemmF32RefAt(data().x, data().w, n, k, idx);
        },
        // f64 sums against the GPU's f32 order: scale-relative.
        gate: { kind: 'rel-to-max', tol: 1e-4 },
        phases: ['scalar-epilogue'],
        analyticOwnership: () => gemmF32AnalyticOwnership(tile, m, n),
        ops: 2 * m * n * k,
        weightBytes: n * k * 4,
      },
    };
  },
};
