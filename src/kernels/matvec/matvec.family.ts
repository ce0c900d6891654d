// The decode matvec family: its catalog (./catalog.ts), the spec of a config, the MMQ family's Q4_K data
// and oracle (the matvec is the same math in another schedule, so the same exact oracle gates it), the
// plan, the ownership, and the tuner's search over planes x columns x arm.
import type { Gate } from '../compare';
import { defineFamily, familyBuilder } from '../define';
import { intParam, type ResolvedConfig, type RunConfig, type TuningSearch } from '../family';
import type { AdapterCaps } from '../gpu/caps';
import {
  fullPrecisionOf,
  INT8_TUNE_GATE,
  mmqDataset,
  mmqOracle,
  mmqPartials,
  mmqTensorDataset,
  mmqWeightBytes,
  OWNER_BUFFER,
} from '../mmq';
import { knobSearch } from '../tune/knobs';
import type { Config } from '../space';
import { matvecQ4kCatalog } from './catalog';
import { matvecOwnership, matvecPlan } from './matvec.plan';
import type { MatvecSpec } from './matvec.wgsl';

const BIT_EXACT: Gate = { kind: 'bit-exact' };

function specOf(config: ResolvedConfig): MatvecSpec {
  const arm = config.arm === 'dp4a' ? 'dp4a' : 'scalar';
  return {
    m: intParam(config.params, 'm'),
    n: intParam(config.params, 'n'),
    k: intParam(config.params, 'k'),
    planes: intParam(config.params, 'planes'),
    cols: intParam(config.params, 'cols'),
    plane: config.plane,
    arm,
  };
}

/** The search: planes x columns x the accelerated arms here; the incumbent is the defaults' 4 x 1. */
function search(base: RunConfig, caps: AdapterCaps): TuningSearch {
  const { space, apply, choiceOf, at } = knobSearch(matvecQ4kCatalog, base, caps);
  return {
    space,
    apply,
    choiceOf,
    incumbent: at({ planes: 4, cols: 1 })!,
    seeds: [at({ planes: 8, cols: 1 }), at({ planes: 2, cols: 2 })].filter(
      (c): c is Config => c !== undefined,
    ),
    gate: INT8_TUNE_GATE,
  };
}

export const matvecQ4kFamily = defineFamily({
  catalog: matvecQ4kCatalog,
  builder: familyBuilder('matvec-q4k', {
    spec: specOf,
    dataKey: (s: MatvecSpec) => ['q4k', s.m, s.n, s.k],
    data: (s, config) => mmqDataset('q4k', s.m, s.n, s.k, config.data.source, config.data.seed),
    tensorData: (s, weight, tensor, seed) => mmqTensorDataset(weight, s.m, tensor.activation, seed),
    plan: (s, data, { instrument }) =>
      matvecPlan(() => data().inputs, s, {
        instrument,
        ...(instrument ? { label: 'matvec-q4k (instrumented)' } : {}),
      }),
    ownerBuffer: OWNER_BUFFER,
    oracle: (s, d) => mmqOracle(d.inputs, s.n, s.k, s.m),
    oracleRows: (s, d, rows) => mmqOracle(d.inputs, s.n, s.k, s.m, rows),
    partials: (s, d, row, col) => mmqPartials(d.inputs, row, col, s.k),
    phases: () => ['scalar-epilogue'],
    ownership: (s) => matvecOwnership(s),
    facts: (s, data) => ({
      rows: s.m,
      cols: s.n,
      fullPrecision: () => fullPrecisionOf(data(), s.n),
      gate: BIT_EXACT,
      ops: 2 * s.m * s.n * s.k,
      weightBytes: mmqWeightBytes('q4k', s.n, s.k),
      outputTile: { rows: s.m, cols: s.planes * s.cols },
    }),
  }),
  search,
});
