// What the app knows of the MoE family before any WGSL exists: routed tokens, experts and top-k, its two
// routes and their arms and rules. Light: no generator, oracle or quant code (see ../family.ts).
import { armPlaneProblems, DP4A_ARM, F16_MATRIX_ARM, int8MatrixArm, SCALAR_ARM } from '../arms';
import { planeWidth, type AdapterCaps } from '../gpu/caps';
import { multipleProblem, shapeControl } from '../controls';
import {
  ARM_KNOB,
  controlProblems,
  dataProblems,
  type ArmDecl,
  type ControlDecl,
  type FamilyCatalog,
  type FamilyParams,
  type RunConfig,
} from '../family';
import { COOPMAT_MAX_ACC_PER_LANE, STAGING_LABELS } from '../coopmat/catalog';
import { gemmWork, WEIGHT_BYTES, workParam } from '../work';
import { REGISTER_TILE, TILE_CONSTRAINTS, TILE_KEYS, tileControls, tileOf, tileString } from '../tile';

/**
 * How the routed GEMM computes: 'int8' = the reference's mmq_q4k_id (q8_1 activation x Q4_K, int8 dot
 * products, bit-exact); 'f16' = the coopmat twin's split plan per expert (f16 operands, f32 sums).
 */
export const MOE_ROUTES = ['int8', 'f16'] as const;
export type MoeRoute = (typeof MOE_ROUTES)[number];
export const MOE_F16_STAGINGS = ['prepass', 'fused-prepass', 'in-gemm', 'stream'] as const;
/** Experts the f16 route's grouping keeps a histogram of in workgroup memory. */
export const MOE_F16_MAX_EXPERTS = 2048;

const routeOf = (p: FamilyParams): MoeRoute => (p.route === 'f16' ? 'f16' : 'int8');
const onF16 = (p: FamilyParams) => routeOf(p) === 'f16';

const controls: ControlDecl[] = [
  shapeControl('tokens', 'tokens', {
    hint: 'tokens routed; each goes to top-k experts (slots = tokens x top-k)',
  }),
  shapeControl('n', 'n', { hint: 'rows of each expert weight (output features)' }),
  shapeControl('k', 'k', {
    min: 256,
    step: () => 256,
    hint: 'the reduction; a multiple of 256 (the Q4_K super-block)',
  }),
  shapeControl('experts', 'experts', { group: 'route', max: 4096, hint: 'expert weights in the bank' }),
  shapeControl('topk', 'top-k', { group: 'route', max: 64, hint: 'distinct experts per token' }),
  {
    kind: 'choice',
    key: 'routing',
    label: 'routing',
    group: 'route',
    hint: 'how tokens pick experts: evenly, or half of them taking expert 0 (one hot expert)',
    options: [
      { value: 'even', label: 'even top-k' },
      { value: 'skewed', label: 'skewed: half the tokens on expert 0' },
    ],
  },
  {
    kind: 'choice',
    key: 'route',
    label: 'route',
    group: 'tile',
    hint: 'int8: the reference kernel (q8_1 x Q4_K int8 dot products); f16: the coopmat split plan per expert',
    options: [
      { value: 'int8', label: 'int8 MMQ (mmq_q4k_id)' },
      { value: 'f16', label: 'f16 split plan, expert-grouped' },
    ],
    tune: {},
  },
  {
    ...shapeControl('ytiles', 'row tiles', {
      group: 'tile',
      max: 65535,
      hint: "int8 route: row tiles per expert in the grid; a grid-stride loop covers the expert's other rows",
    }),
    visible: (p) => !onF16(p),
    tune: { values: [1, 2, 4, 8, 16] },
  },
  ...tileControls([1, 2, 4, 8]).map((c) => ({ ...c, visible: onF16 })),
  {
    kind: 'choice',
    key: 'staging',
    label: 'staging',
    group: 'tile',
    hint: 'f16 route: how the operands reach the GEMM',
    options: MOE_F16_STAGINGS.map((value) => ({ value, label: STAGING_LABELS[value] })),
    visible: onF16,
    tune: {},
  },
  {
    kind: 'int',
    key: 'ksplit',
    label: 'K parts',
    group: 'tile',
    min: 1,
    max: 16,
    step: () => 1,
    hint: 'f16 stream staging: K parts per workgroup, each on its own planes, added in order',
    visible: (p) => onF16(p) && p.staging === 'stream',
    tune: { values: [1, 2, 4, 8] },
  },
];

/** The K parts a config runs: the stream staging's, else one (the other stagings take no split-K). */
export const moeKParts = (p: FamilyParams): number =>
  onF16(p) && p.staging === 'stream' && typeof p.ksplit === 'number' ? p.ksplit : 1;

const INT8_MATRIX = int8MatrixArm(() => [16, 16, 32]);
const F16_ONLY = 'the f16 route runs on the scalar and the f16 subgroup-matrix arms';

/** The arms of both routes: dp4a is the int8 route's; the matrix arm is each route's own kind. */
export const MOE_ARMS: readonly ArmDecl[] = [
  SCALAR_ARM,
  { ...DP4A_ARM, unavailable: (caps, p) => (onF16(p) ? F16_ONLY : DP4A_ARM.unavailable(caps, p)) },
  {
    arm: 'subgroup-matrix',
    label: 'subgroup matrix (int8, or f16 on the f16 route)',
    unavailable: (caps, p) => (onF16(p) ? F16_MATRIX_ARM : INT8_MATRIX).unavailable(caps, p),
  },
];

export const moeCatalog: FamilyCatalog = {
  id: 'moe-q4k-id',
  title: 'MoE Q4_K MMQ, expert-indexed',
  summary:
    'Routed slots grouped per expert, then one GEMM gathering each expert rows and scattering them back: the int8 route is the twin of mmq_q4k_id; the f16 route runs the coopmat split plan per expert.',
  reference: 'mmq_q4k_id',
  arithmetic: 'int8',
  arms: MOE_ARMS,
  controls,
  takes: { format: 'Q4_K', bank: true, rows: 'tokens' },
  // Every expert of the bank is counted as read (an upper bound: idle experts are skipped).
  work: (q) =>
    gemmWork({
      rows: workParam(q, 'tokens', 1),
      topk: workParam(q, 'topk', 1),
      experts: workParam(q, 'experts', 1),
      n: workParam(q, 'n', 1),
      k: workParam(q, 'k', 256),
      weightBytes: WEIGHT_BYTES.Q4_K,
      activationBytes: onF16(q) ? 2 : 1,
    }),
  defaults: {
    tokens: 32,
    n: 128,
    k: 512,
    experts: 8,
    topk: 2,
    routing: 'even',
    route: 'int8',
    ytiles: 1,
    wm: 2,
    wn: 2,
    rm: 1,
    rn: 1,
    staging: 'prepass',
    ksplit: 1,
  },
  small: { tokens: 8, n: 64, k: 256, experts: 4, topk: 2 },
  checks: [
    {
      label: 'one expert, m and n tails',
      params: { tokens: 17, n: 50, k: 512, experts: 1, topk: 1, ytiles: 1 },
    },
    {
      label: '8 experts top-2, tails, 2 row tiles',
      params: { tokens: 40, n: 100, k: 256, experts: 8, topk: 2, ytiles: 2 },
    },
    {
      label: 'f16 route: 5 experts, uneven loads, several row tiles per expert at (1,1,1,1)',
      params: { tokens: 70, n: 40, k: 256, experts: 5, topk: 2, wm: 1, wn: 1, rm: 1, rn: 1 },
      choices: { route: ['f16'] },
    },
    {
      label: 'f16 stream: 2 K parts, 16-row tiles, skewed routing (expert 0 hot), tails',
      params: {
        tokens: 40,
        n: 40,
        k: 512,
        experts: 6,
        topk: 2,
        wm: 1,
        wn: 1,
        rm: 1,
        rn: 1,
        ksplit: 2,
        routing: 'skewed',
      },
      choices: { route: ['f16'], staging: ['stream'] },
    },
    {
      label: 'grid-stride: 100 rows per expert on 2 row tiles',
      params: { tokens: 100, n: 64, k: 256, experts: 2, topk: 2, ytiles: 2 },
    },
  ],
  validate(config: RunConfig, caps?: AdapterCaps) {
    const q = config.params;
    const out = controlProblems(controls, q);
    out.push(...multipleProblem('k', q.k, 256, 'the Q4_K super-block'));
    if (typeof q.topk === 'number' && typeof q.experts === 'number' && q.topk > q.experts)
      out.push(`top-k = ${q.topk} > experts = ${q.experts}: each token's experts must be distinct`);
    if (!out.length && onF16(q)) {
      const parts = moeKParts(q);
      if (parts > 1)
        out.push(
          ...multipleProblem('k', q.k, parts * 64, `${parts} K parts x the 64-wide stage of the GEMM`),
        );
      if ((q.experts as number) > MOE_F16_MAX_EXPERTS)
        out.push(`experts = ${String(q.experts)}: the f16 route groups at most ${MOE_F16_MAX_EXPERTS}`);
      const plane = config.plane ?? (caps ? planeWidth(caps) : undefined);
      const t = tileOf(q);
      if (
        config.arm === 'scalar' &&
        plane !== undefined &&
        t.rm * t.rn * (256 / plane) > COOPMAT_MAX_ACC_PER_LANE
      )
        out.push(
          `tile rm ${t.rm} x rn ${t.rn} at plane width ${plane} holds ${t.rm * t.rn * (256 / plane)} f32 accumulators per lane (at most ${COOPMAT_MAX_ACC_PER_LANE})`,
        );
    }
    return [...out, ...armPlaneProblems(moeCatalog, config, caps), ...dataProblems(config.data, moeCatalog)];
  },
  // The f16 route's tile is a knob; the int8 route gathers rows through the slot lists on the preset's.
  tile: { keys: REGISTER_TILE.keys, block: (p) => (onF16(p) ? REGISTER_TILE.block(p) : undefined) },
  tuning: {
    op: 'mmq_q4k_id',
    label: 'MoE: route, arm, tile and staging (mmq_q4k_id)',
    knobs: [...TILE_KEYS, 'route', ARM_KNOB, 'staging', 'ytiles', 'ksplit'],
    constraints: TILE_CONSTRAINTS,
    armsFollow: ['route'],
  },
  knobLabel: (p) =>
    (onF16(p)
      ? `f16,${tileString(tileOf(p))},${String(p.staging)}${moeKParts(p) > 1 ? `,ksplit${moeKParts(p)}` : ''}`
      : `int8,ytiles${String(p.ytiles)}`) + (p.routing === 'skewed' ? ',skewed' : ''),
};
