// What the app knows of the decode matvec before any WGSL exists: its shape (a few activation rows
// against a Q4_K weight), its two knobs (planes per workgroup, columns per plane), arms and rules.
// Light: no generator, oracle or quant code (see ../family.ts).
import { DP4A_ARM, SCALAR_ARM, armPlaneProblems } from '../arms';
import type { AdapterCaps } from '../gpu/caps';
import { multipleProblem, shapeControl } from '../controls';
import {
  ARM_KNOB,
  controlProblems,
  dataProblems,
  type ControlDecl,
  type FamilyCatalog,
  type RunConfig,
} from '../family';
import { denseGemmWork } from '../work';

/** The most activation rows one call takes: decode is 1..8; each row's sums live in workgroup memory. */
export const MATVEC_MAX_ROWS = 16;

/** Planes per workgroup and columns per plane the generator takes. */
export const MATVEC_PLANES = [1, 2, 4, 8] as const;
export const MATVEC_COLS = [1, 2, 4] as const;

const oneOf = (key: string, v: unknown, allowed: readonly number[]) =>
  typeof v === 'number' && !allowed.includes(v) ? [`${key} = ${v} must be one of ${allowed.join(', ')}`] : [];

const controls: ControlDecl[] = [
  shapeControl('m', 'm', { max: MATVEC_MAX_ROWS, hint: `activation rows (tokens), 1..${MATVEC_MAX_ROWS}` }),
  shapeControl('n', 'n', { hint: 'weight rows (output features)' }),
  shapeControl('k', 'k', {
    min: 256,
    step: () => 256,
    hint: 'the reduction; a multiple of 256 (the Q4_K super-block)',
  }),
  {
    kind: 'int',
    key: 'planes',
    label: 'planes',
    group: 'tile',
    min: 1,
    max: 8,
    step: (p) => (typeof p.planes === 'number' && p.planes >= 2 ? p.planes / 2 : 1),
    hint: 'planes per workgroup (1, 2, 4 or 8), each on its own output columns',
    tune: { values: MATVEC_PLANES },
  },
  {
    kind: 'int',
    key: 'cols',
    label: 'columns',
    group: 'tile',
    min: 1,
    max: 4,
    step: () => 1,
    hint: 'output columns per plane (1, 2 or 4): its lanes split K, each weight byte read once',
    tune: { values: MATVEC_COLS },
  },
];

export const matvecQ4kCatalog: FamilyCatalog = {
  id: 'matvec-q4k',
  title: 'Q4_K matvec (decode), one dispatch',
  summary:
    'A few q8_1 activation rows against a Q4_K weight in one dispatch, each weight byte read once: the lanes of a plane split K, every 32-block scaled as the MMQ oracle does and summed in K order. Sibling of matvec_q4k.',
  reference: 'matvec_q4k',
  arithmetic: 'int8',
  arms: [SCALAR_ARM, DP4A_ARM],
  controls,
  takes: { format: 'Q4_K', bank: false, rows: 'm' },
  work: denseGemmWork('Q4_K', 1, 256),
  defaults: { m: 1, n: 256, k: 1024, planes: 4, cols: 1 },
  small: { m: 2, n: 64, k: 256 },
  checks: [
    { label: 'one row, one plane a workgroup', params: { m: 1, n: 64, k: 512, planes: 1, cols: 1 } },
    { label: '8 rows, an n tail, two columns a plane', params: { m: 8, n: 50, k: 1024, planes: 2, cols: 2 } },
    { label: '3 rows, 4 columns a plane, an n tail', params: { m: 3, n: 70, k: 256, planes: 4, cols: 4 } },
  ],
  validate(config: RunConfig, caps?: AdapterCaps) {
    const q = config.params;
    const out = controlProblems(controls, q);
    out.push(...multipleProblem('k', q.k, 256, 'the Q4_K super-block'));
    out.push(...oneOf('planes', q.planes, MATVEC_PLANES), ...oneOf('columns', q.cols, MATVEC_COLS));
    return [
      ...out,
      ...armPlaneProblems(matvecQ4kCatalog, config, caps),
      ...dataProblems(config.data, matvecQ4kCatalog),
    ];
  },
  tuning: {
    op: 'matvec_q4k',
    label: 'Q4_K decode matvec: planes x columns (matvec_q4k)',
    knobs: ['planes', 'cols', ARM_KNOB],
  },
};
