// What the app knows of the MoE family before any WGSL exists: routed tokens, experts and top-k, the
// expert-indexed Q4_K MMQ's arms and rules. Light: no generator, oracle or quant code (see ../family.ts).
import { armPlaneProblems } from '../gpu/arms';
import type { AdapterCaps } from '../gpu/caps';
import { multipleProblem, shapeControl } from '../controls';
import {
  controlProblems,
  dataProblems,
  type ControlDecl,
  type FamilyCatalog,
  type RunConfig,
} from '../family';
import { MMQ_ARMS } from '../mmq/catalog';

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
  shapeControl('ytiles', 'row tiles', {
    group: 'route',
    max: 65535,
    hint: "row tiles per expert in the grid; a grid-stride loop covers the expert's other rows",
  }),
];

export const moeCatalog: FamilyCatalog = {
  id: 'moe-q4k-id',
  title: 'MoE Q4_K MMQ, expert-indexed',
  summary:
    'Routed slots grouped per expert (moe_expert_rows), then one Q4_K MMQ over (n-tiles, row tiles, experts) gathering A and scattering out through the slot lists: twin of mmq_q4k_id.',
  reference: 'mmq_q4k_id',
  arithmetic: 'int8',
  arms: MMQ_ARMS,
  controls,
  takes: { format: 'Q4_K', bank: true, rows: 'tokens' },
  defaults: { tokens: 32, n: 128, k: 512, experts: 8, topk: 2, ytiles: 1 },
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
    return [...out, ...armPlaneProblems(moeCatalog, config, caps), ...dataProblems(config.data, moeCatalog)];
  },
};
