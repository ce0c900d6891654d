// What the app knows of the f16 coopmat twin before any WGSL exists: its stagings, tile, arms and rules.
// Light: no generator, oracle or quant code (see ../family.ts).
import { armPlaneProblems, F16_MATRIX_ARM, SCALAR_ARM } from '../arms';
import { planeWidth, type AdapterCaps } from '../gpu/caps';
import { multipleProblem, shapeControl } from '../controls';
import {
  ARM_KNOB,
  controlProblems,
  dataProblems,
  positiveIntegerProblems,
  type ControlDecl,
  type FamilyCatalog,
  type RunConfig,
} from '../family';
import { denseGemmWork } from '../work';
import { REGISTER_TILE, TILE_CONSTRAINTS, TILE_KEYS, tileControls, tileOf, tileString } from '../tile';

export type CoopmatArm = 'scalar' | 'subgroup-matrix';

/**
 * How the operands reach the contraction:
 *   'one-pass': one kernel decodes Q4_K and rounds x to f16 in its workgroup tiles (the reference's layout);
 *   'prepass': the split plan: a weight pre-pass (Q4_K -> f16), an activation pre-pass (f16 fragment
 *     tiles), then the GEMM (docs/decisions/0001-split-plan.md);
 *   'fused-prepass': the same with both pre-passes in one dispatch;
 *   'in-gemm': no weight pre-pass: the GEMM's stage decodes B from the Q4_K words;
 *   'stream': the weight streamed for few rows (decode, m <= 32): every plane takes its own K part and
 *     stages its own B, several stages of weight words in flight, the parts added in the workgroup.
 * Every arm runs every staging (the scalar arm is the bit-exact reference of each).
 */
export const COOPMAT_STAGINGS = ['one-pass', 'prepass', 'fused-prepass', 'in-gemm', 'stream'] as const;
export type CoopmatStaging = (typeof COOPMAT_STAGINGS)[number];

/** What each staging is made of: the one table the generators, the plan and the rules read. */
export const STAGING_FLAGS: Record<
  CoopmatStaging,
  { prePasses: boolean; weightPrePass: 'none' | 'own' | 'fused'; b: 'rows' | 'q4k'; stream: boolean }
> = {
  'one-pass': { prePasses: false, weightPrePass: 'none', b: 'q4k', stream: false },
  prepass: { prePasses: true, weightPrePass: 'own', b: 'rows', stream: false },
  'fused-prepass': { prePasses: true, weightPrePass: 'fused', b: 'rows', stream: false },
  'in-gemm': { prePasses: true, weightPrePass: 'none', b: 'q4k', stream: false },
  stream: { prePasses: true, weightPrePass: 'none', b: 'q4k', stream: true },
};

export const STAGING_LABELS: Record<CoopmatStaging, string> = {
  'one-pass': 'one pass (decode and round in the tile)',
  prepass: 'split: weight and activation pre-passes',
  'fused-prepass': 'split: both pre-passes in one dispatch',
  'in-gemm': 'split: B decoded from Q4_K in the GEMM',
  stream: 'stream: K split across planes, weight words in flight (few rows)',
};

/** The 64-wide K stage of the split and stream GEMMs (coopmat.params.ts SPLIT_K_STAGE). */
const STAGE = 64;

/**
 * The shape and knob rules of a coopmat GEMM, one message per problem, in ONE place: the family's
 * validate and the generator's spec check both call it (k and the Q4_K super-block, the tile, split-K).
 * @example coopmatRuleProblems({ m: 64, n: 64, k: 300, wm: 2, wn: 2, rm: 1, rn: 1, staging: 'prepass', ksplit: 1 })
 */
export function coopmatRuleProblems(p: {
  m: number;
  n: number;
  k: number;
  wm: number;
  wn: number;
  rm: number;
  rn: number;
  staging: string;
  ksplit: number;
}): string[] {
  const errs = positiveIntegerProblems({ m: p.m, n: p.n });
  if (!Number.isInteger(p.k) || p.k < 256)
    errs.push(`k = ${p.k} must be a positive multiple of the 256-wide Q4_K super-block`);
  else errs.push(...multipleProblem('k', p.k, 256, 'the Q4_K super-block'));
  for (const key of ['wm', 'wn', 'rm', 'rn'] as const)
    if (!Number.isInteger(p[key]) || p[key] < 1 || p[key] > 16)
      errs.push(`tile ${key} = ${p[key]} must be an integer in 1..16`);
  const staging = STAGING_FLAGS[p.staging as CoopmatStaging];
  if (!staging) errs.push(`unknown staging '${p.staging}'`);
  const ks = p.ksplit;
  if (!Number.isInteger(ks) || ks < 1 || ks > 64) errs.push(`ksplit = ${ks} must be an integer in 1..64`);
  else if (ks > 1 && staging && !staging.prePasses)
    errs.push('split-K needs a split staging (the one-pass kernel has none)');
  else if (ks > 1 && errs.length === 0)
    errs.push(
      ...multipleProblem('k', p.k, ks * STAGE, `split-K ${ks} x the ${STAGE}-wide stage of the GEMM`),
    );
  return errs;
}

/** Largest f32 accumulator array a scalar lane may hold (rm*rn*256/plane): beyond it compilers spill or stall. */
export const COOPMAT_MAX_ACC_PER_LANE = 4096;

const controls: ControlDecl[] = [
  shapeControl('m', 'm', { hint: 'activation rows (tokens)' }),
  shapeControl('n', 'n', { hint: 'weight rows (output features)' }),
  shapeControl('k', 'k', {
    min: 256,
    step: () => 256,
    hint: 'the reduction; a multiple of 256 (the Q4_K super-block)',
  }),
  ...tileControls([1, 2, 4, 8]),
  {
    kind: 'choice',
    key: 'staging',
    label: 'staging',
    group: 'tile',
    hint: 'how the operands reach the matrix work; the tuner searches it with the tile',
    options: COOPMAT_STAGINGS.map((value) => ({ value, label: STAGING_LABELS[value] })),
    tune: {},
  },
  {
    kind: 'int',
    key: 'ksplit',
    label: 'split-K',
    group: 'tile',
    min: 1,
    max: 16,
    step: () => 1,
    hint: 'K parts summed in order, by a reduction pass (split stagings) or in the workgroup (stream): more workgroups or planes when m is small',
    visible: (p) => p.staging !== 'one-pass',
    tune: { values: [1, 2, 4, 8, 16] },
  },
];

export const coopmatCatalog: FamilyCatalog = {
  id: 'coopmat-f16',
  title: 'f16 coopmat Q4_K GEMM',
  summary:
    'out = x @ W^T with Q4_K W decoded to f16 (scale folded in), f16 operands, f32 accumulators held across K; comptime wm x wn x rm x rn tile (mmq_q4k_coopmat_tile).',
  reference: 'mmq_q4k_coopmat_tile',
  arithmetic: 'f16',
  arms: [{ ...SCALAR_ARM, label: 'scalar (f16 rounding in core WGSL)' }, F16_MATRIX_ARM],
  controls,
  takes: { format: 'Q4_K', bank: false, rows: 'm' },
  work: denseGemmWork('Q4_K', 2, 256),
  defaults: { m: 64, n: 64, k: 256, wm: 2, wn: 2, rm: 1, rn: 1, staging: 'prepass', ksplit: 1 },
  small: { m: 32, n: 32, k: 256 },
  checks: [
    { label: 'tile (1,1,1,1): a 3 x 5 grid', params: { m: 48, n: 80, k: 256, wm: 1, wn: 1, rm: 1, rn: 1 } },
    {
      label: 'tile (2,1,1,2): m and n tails, two super-blocks',
      params: { m: 17, n: 50, k: 512, wm: 2, wn: 1, rm: 1, rn: 2 },
    },
    {
      label: 'tile (2,2,2,2): a 2 x 2 grid with tails',
      params: { m: 100, n: 72, k: 256, wm: 2, wn: 2, rm: 2, rn: 2 },
    },
    {
      label: 'split-K 4 with m and n tails: four parts summed in order',
      params: { m: 20, n: 40, k: 1024, wm: 2, wn: 2, rm: 1, rn: 1, ksplit: 4 },
      choices: { staging: ['prepass', 'fused-prepass', 'in-gemm'] },
    },
    {
      label: 'stream: 4 K parts added in the workgroup, m and n tails, two row tiles',
      params: { m: 40, n: 40, k: 1024, wm: 1, wn: 1, rm: 2, rn: 1, ksplit: 4 },
      choices: { staging: ['stream'] },
    },
  ],
  validate(config: RunConfig, caps?: AdapterCaps) {
    const q = config.params;
    const out = controlProblems(controls, q);
    const num = (key: string) => q[key] as number;
    if (!out.length)
      out.push(
        ...coopmatRuleProblems({
          ...tileOf(q),
          m: num('m'),
          n: num('n'),
          k: num('k'),
          staging: String(q.staging),
          ksplit: num('ksplit'),
        }),
      );
    const plane = config.plane ?? (caps ? planeWidth(caps) : undefined);
    if (!out.length && config.arm === 'scalar' && plane !== undefined) {
      const t = tileOf(q);
      const acc = t.rm * t.rn * (256 / plane);
      if (acc > COOPMAT_MAX_ACC_PER_LANE)
        out.push(
          `tile rm ${t.rm} x rn ${t.rn} at plane width ${plane} holds ${acc} f32 accumulators per lane (at most ${COOPMAT_MAX_ACC_PER_LANE})`,
        );
    }
    return [
      ...out,
      ...armPlaneProblems(coopmatCatalog, config, caps),
      ...dataProblems(config.data, coopmatCatalog),
    ];
  },
  tile: REGISTER_TILE,
  tuning: {
    op: 'mmq_q4k_coopmat',
    label: 'f16 coopmat twin: tile, staging, split-K (mmq_q4k_coopmat)',
    knobs: [...TILE_KEYS, 'staging', ARM_KNOB, 'ksplit'],
    constraints: TILE_CONSTRAINTS,
  },
  knobLabel: (p) =>
    `${tileString(tileOf(p))},${String(p.staging)}${typeof p.ksplit === 'number' && p.ksplit > 1 ? `,ksplit${p.ksplit}` : ''}`,
};
