// The f32 baseline GEMM's only public entry: generator, plan, oracles, and the baseline as a family the
// bench runs beside the product's (ratio (a): the quantized kernels against plain f32). Not in the
// registries: the app does not offer it.
import { SCALAR_ARM } from '../arms';
import { shapeControl } from '../controls';
import { defineFamily, familyBuilder } from '../define';
import { choiceParam, controlProblems, intParam, type ControlDecl, type FamilyCatalog } from '../family';
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

const catalog: FamilyCatalog = {
  id: 'gemm-f32',
  title: 'f32 tiled GEMM (baseline)',
  summary:
    'Plain f32 register-tiled GEMM out = x @ W^T: the bench baseline the quantized kernels are compared with.',
  reference: '-',
  arithmetic: 'f16',
  arms: [{ ...SCALAR_ARM, label: 'f32' }],
  controls,
  defaults: { m: 64, n: 64, k: 128, tile: '32x32x16/4x4' },
  small: { m: 32, n: 32, k: 64 },
  validate: (config) => controlProblems(controls, config.params),
};

/** A baseline config's shape and tile. */
interface GemmSpec {
  m: number;
  n: number;
  k: number;
  tile: GemmF32Tile;
}

/** The f32 tiled GEMM out = x @ w^T on random f32 operands, gated scale-relatively against f64. */
export const gemmF32BaselineFamily = defineFamily({
  catalog,
  builder: familyBuilder(catalog.id, {
    spec(config): GemmSpec {
      const [m, n, k] = ['m', 'n', 'k'].map((key) => intParam(config.params, key)) as [
        number,
        number,
        number,
      ];
      return { m, n, k, tile: gemmF32TileOf(choiceParam(config.params, 'tile', GEMM_F32_TILES)) };
    },
    dataKey: ({ m, n, k }) => [m, n, k],
    data: ({ m, n, k }, config) => ({
      x: fastActivation(m, k, 2 * config.data.seed + 11),
      w: fastActivation(n, k, 2 * config.data.seed + 12),
    }),
    plan: ({ m, n, k, tile }, data, { instrument, caps }) =>
      gemmF32Plan(data, m, n, k, tile, caps, { instrument }),
    ownerBuffer: GEMM_OWNER_BUFFER,
    oracle: (s, d) =>
      rowsOracle(
        s,
        d,
        Array.from({ length: s.m }, (_, i) => i),
      ),
    oracleRows: rowsOracle,
    phases: () => ['scalar-epilogue'],
    ownership: ({ m, n, tile }) => gemmF32AnalyticOwnership(tile, m, n),
    facts: ({ m, n, k }) => ({
      rows: m,
      cols: n,
      // f64 sums against the GPU's f32 order: scale-relative.
      gate: { kind: 'rel-to-max', tol: 1e-4 },
      ops: 2 * m * n * k,
      weightBytes: n * k * 4,
    }),
  }),
});

/** The baseline's oracle of some output rows (f64 sums rounded to f32). */
function rowsOracle(
  { n, k }: GemmSpec,
  d: { x: Float32Array; w: Float32Array },
  rows: readonly number[],
): Float32Array {
  const idx = rows.flatMap((r) => Array.from({ length: n }, (_, j) => r * n + j));
  return gemmF32RefAt(d.x, d.w, n, k, idx);
}
