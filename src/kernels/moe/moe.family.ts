// The MoE family. The int8 route is the twin of mmq_q4k_id + moe_expert_rows: routed slots grouped per
// expert on the GPU, then one GEMM over (n-tiles, ytiles, experts) with gather/scatter through the lists.
// The f16 route (moe.f16.ts) runs the coopmat twin's split plan per expert. The search picks the route,
// the arm and the route's own knobs by measurement.
import { defineFamily, assertValid, familyBuilder } from '../define';
import {
  choiceParam,
  intParam,
  type BuiltProblem,
  type ResolvedConfig,
  type RunConfig,
  type TuningSearch,
  type WeightOperand,
} from '../family';
import { defaultArm, fastArms } from '../arms';
import type { AdapterCaps, Arm } from '../gpu/caps';
import {
  coopmatData,
  coopmatGate,
  coopmatGeometry,
  COOPMAT_MATRIX_GATE,
  COOPMAT_OWNER_BUFFER,
  coopmatPhase,
  q4kWeight,
  type CoopmatArm,
  type CoopmatData,
  type CoopmatSpec,
} from '../coopmat';
import { modelActivation } from '../quant/gen';
import { tileOf, type TileParams } from '../tile';
import type { Config } from '../space';
import { knobSearch } from '../tune/knobs';
import {
  fullPrecisionOf,
  mmqDataset,
  mmqTensorDataset,
  mmqOwnership,
  mmqPartials,
  mmqPhases,
  mmqPresetSpec,
  mmqQ4kIdRef,
  mmqQ8IdRef,
  mmqWeightBytes,
  OWNER_BUFFER,
  type MmqInputs,
  type MmqSpec,
} from '../mmq';
import { streamSeed } from '../quant/gen';
import { MOE_F16_STAGINGS, MOE_ROUTES, moeCatalog, moeKParts, type MoeRoute } from './catalog';
import {
  expertRowMap,
  moeF16Ownership,
  moeF16Plan,
  moeF16RoundedRef,
  moeF16Tiles,
  moeF32Ref,
} from './moe.f16';
import {
  buildMoePlan,
  moeAnalyticOwnership,
  MOE_ROUTING_SEED,
  moeRouting,
  moeSkewedRouting,
  usedExperts,
  type MoeProblem,
} from './moe.plan';

export interface MoeOverrides {
  /** Explicit routing (length tokens*topk) instead of the seeded stream, e.g. the reference test's uneven list. */
  ids?: Uint32Array;
  /** Rows-per-expert bound (default tokens, exact for distinct top-k). */
  cap?: number;
  /** The indexed spec to run (default: the 'mmq-q4k-id' preset; tests run its Q8_0 variant). */
  spec?: MmqSpec;
}

/** The routed problem of a validated config: seeded distinct top-k routing unless ids are given. */
export function moeProblemOf(c: ResolvedConfig, o: MoeOverrides = {}): MoeProblem {
  const [tokens, n, k, experts, topk, ytiles] = ['tokens', 'n', 'k', 'experts', 'topk', 'ytiles'].map((key) =>
    intParam(c.params, key),
  ) as [number, number, number, number, number, number];
  const route = c.params.routing === 'skewed' ? moeSkewedRouting : moeRouting;
  const ids = o.ids ?? route(tokens, experts, topk, streamSeed(c.data.seed, MOE_ROUTING_SEED));
  return { tokens, topk, experts, n, k, ids, cap: o.cap ?? tokens, ytiles };
}

/** The int8 route's spec: the indexed MMQ spec and the routed problem it runs. */
interface Int8Spec {
  mmq: MmqSpec;
  problem: MoeProblem;
}

/** The int8 route: group the slots per expert on the GPU, then the expert-indexed MMQ GEMM. */
function int8Route(o: MoeOverrides) {
  return familyBuilder('moe-q4k-id', {
    spec(c: ResolvedConfig): Int8Spec {
      const problem = moeProblemOf(c, o);
      const slots = problem.tokens * problem.topk;
      const mmq =
        o.spec ??
        mmqPresetSpec('mmq-q4k-id', { m: slots, n: problem.n, k: problem.k, arm: c.arm, plane: c.plane });
      return { mmq, problem };
    },
    dataKey: ({ mmq, problem: p }) => [mmq.weights, p.tokens * p.topk, p.experts, p.n, p.k],
    data: ({ mmq, problem: p }, c) =>
      mmqDataset(mmq.weights, p.tokens * p.topk, p.experts * p.n, p.k, c.data.source, c.data.seed),
    tensorData: ({ problem: p }, weight, tensor, seed) =>
      mmqTensorDataset(weight, p.tokens * p.topk, tensor.activation, seed),
    plan: ({ mmq, problem }, data, { instrument }) =>
      buildMoePlan(() => data().inputs, problem, mmq, {
        label: instrument ? 'moe-q4k-id (instrumented)' : 'moe-q4k-id',
        ...(instrument ? { instrument } : {}),
      }),
    ownerBuffer: OWNER_BUFFER,
    oracle: ({ problem: p }, { inputs }) => int8Oracle(p, inputs),
    // A gate's sampled rows cost only their own slots and the experts they use.
    oracleRows: ({ problem: p }, { inputs }, rows) => int8Oracle(p, inputs, rows),
    partials: ({ problem: p }, { inputs }, slot, col) =>
      mmqPartials(inputs, slot, col, p.k, p.ids[slot]! * p.n + col),
    phases: ({ mmq }) => mmqPhases(mmq),
    ownership: ({ mmq, problem: p }, phase) =>
      mmqOwnership(phase, p.tokens * p.topk, p.n, () => moeAnalyticOwnership(mmq, p)),
    facts: ({ mmq, problem: p }, data) => ({
      rows: p.tokens * p.topk,
      cols: p.n,
      fullPrecision: () => fullPrecisionOf(data(), p.n, p.ids),
      // int8 sums are exact and the epilogue runs in the oracle's order, as in the dense kernels.
      gate: { kind: 'bit-exact' },
      dataKey: 'int8',
      ops: 2 * p.tokens * p.topk * p.n * p.k,
      // Rows are scattered through the slot lists: the output has no tile grid (no outputTile).
      weightBytes: mmqWeightBytes(mmq.weights, usedExperts(p.ids, p.experts) * p.n, p.k),
    }),
    expose: ({ mmq, problem }) => ({ problem, spec: mmq }),
  });
}

/** The int8 route's oracle of slots `rows` (all when undefined). */
function int8Oracle(p: MoeProblem, inputs: MmqInputs, rows?: readonly number[]): Float32Array {
  const slots = p.tokens * p.topk;
  return inputs.weights === 'q4k'
    ? mmqQ4kIdRef(inputs.data, p.ids, slots, p.n, p.k, rows)
    : mmqQ8IdRef(inputs.data, p.ids, slots, p.n, p.k, rows);
}

/** The f16 route's spec: the routed coopmat spec, its row tiles and the routed problem. */
interface F16Spec {
  coop: CoopmatSpec;
  tiles: number;
  problem: MoeProblem;
}

/** The f16 route: the routing table, the gathered f16 rows and the per-expert split GEMM (moe.f16.ts). */
function f16Route(o: MoeOverrides) {
  return familyBuilder('moe-q4k-id', {
    spec(c: ResolvedConfig, caps: AdapterCaps): F16Spec {
      const problem = moeProblemOf(c, o);
      const { n, k, experts } = problem;
      const slots = problem.tokens * problem.topk;
      const tile = tileOf(c.params);
      const { bm } = coopmatGeometry({ tile, plane: c.plane });
      const tiles = moeF16Tiles(slots, experts, bm);
      const coop: CoopmatSpec = {
        m: tiles * bm,
        n,
        k,
        tile,
        plane: c.plane,
        arm: c.arm as CoopmatArm,
        f16: caps.shaderF16 ? 'native' : 'emulated',
        staging: choiceParam(c.params, 'staging', MOE_F16_STAGINGS),
        ksplit: moeKParts(c.params),
        rowMap: expertRowMap(experts, tiles, bm),
      };
      return { coop, tiles, problem };
    },
    dataKey: ({ problem: p }) => [p.tokens * p.topk, p.experts, p.n, p.k],
    data: ({ problem: p }, c) =>
      coopmatData(p.tokens * p.topk, p.experts * p.n, p.k, c.data.source, c.data.seed),
    tensorData: ({ problem: p }, weight, tensor, seed): CoopmatData => ({
      x: modelActivation(p.tokens * p.topk, p.k, tensor.activation, seed),
      w: q4kWeight(weight),
    }),
    plan: ({ coop, tiles, problem }, data, { instrument }) =>
      moeF16Plan(problem, coop, tiles, data, { instrument }),
    ownerBuffer: COOPMAT_OWNER_BUFFER,
    oracle: ({ coop, problem: p }, d) =>
      moeF16RoundedRef(d, p.ids, p.n, p.k, undefined, p.tokens * p.topk, 'separate', coop.ksplit),
    oracleRows: ({ coop, problem: p }, d, rows) =>
      moeF16RoundedRef(d, p.ids, p.n, p.k, rows, p.tokens * p.topk, 'separate', coop.ksplit),
    phases: ({ coop }) => [coopmatPhase(coop)],
    ownership: ({ coop, problem }) => moeF16Ownership(coop, problem),
    facts: ({ coop, problem: p }, data) => ({
      rows: p.tokens * p.topk,
      cols: p.n,
      fullPrecision: () => moeF32Ref(data(), p.ids, p.n, p.k, p.tokens * p.topk),
      gate: coopmatGate(coop.arm),
      ops: 2 * p.tokens * p.topk * p.n * p.k,
      weightBytes: (usedExperts(p.ids, p.experts) * p.n * p.k * 144) / 256,
      arithmetic: 'f16',
      dataKey: 'f16',
    }),
    expose: ({ coop, tiles, problem }, data) => ({ problem, spec: coop, tiles, data }),
  });
}

/** The routes of the family as it runs (no overrides). */
const INT8 = int8Route({});
const F16 = f16Route({});

/**
 * Validate and build an int8-route problem, optionally with explicit routing or another indexed spec.
 * @example buildMoe({ ...config, params: { ...p, tokens: 12, topk: 1, experts: 5 } }, caps, { ids: new Uint32Array([0, 2, 0, 4, 1, 0, 2, 4, 0, 1, 2, 0]), cap: 8 })
 */
export function buildMoe(c: ResolvedConfig, caps: AdapterCaps, o: MoeOverrides = {}, weight?: WeightOperand) {
  assertValid(moeCatalog, c, caps, weight);
  return (Object.keys(o).length ? int8Route(o) : INT8).buildValid(c, caps, weight);
}

/**
 * Validate and build an f16-route problem, optionally with explicit routing.
 * @example buildMoeF16({ ...config, params: { ...config.params, route: 'f16' } }, caps)
 */
export function buildMoeF16(
  c: ResolvedConfig,
  caps: AdapterCaps,
  o: MoeOverrides = {},
  weight?: WeightOperand,
) {
  assertValid(moeCatalog, c, caps, weight);
  return (Object.keys(o).length ? f16Route(o) : F16).buildValid(c, caps, weight);
}

const routeOf = (c: Pick<RunConfig, 'params'>): MoeRoute => choiceParam(c.params, 'route', MOE_ROUTES);

/** Tiles and stagings of the f16 route worth starting from: the dense twin's winners by rows per expert. */
const F16_SEEDS: readonly [TileParams, (typeof MOE_F16_STAGINGS)[number], number][] = [
  [{ wm: 8, wn: 1, rm: 2, rn: 8 }, 'fused-prepass', 1],
  [{ wm: 4, wn: 1, rm: 2, rn: 4 }, 'prepass', 1],
  [{ wm: 4, wn: 1, rm: 1, rn: 4 }, 'in-gemm', 1],
  [{ wm: 2, wn: 1, rm: 1, rn: 2 }, 'in-gemm', 1],
  [{ wm: 1, wn: 2, rm: 1, rn: 2 }, 'in-gemm', 1],
  // Few rows an expert: stream its weight once per row tile, several stages in flight in each K part.
  [{ wm: 1, wn: 1, rm: 1, rn: 1 }, 'stream', 4],
  [{ wm: 1, wn: 1, rm: 2, rn: 1 }, 'stream', 4],
  [{ wm: 1, wn: 1, rm: 2, rn: 2 }, 'stream', 2],
];
/**
 * The MoE search: route x arm, the f16 route's tile, staging and K parts, the int8 route's row tiles
 * (catalog.ts; each route's knobs are hidden on the other, so an int8 config rests on the 1x1x1x1 tile).
 */
function search(base: RunConfig, caps: AdapterCaps): TuningSearch {
  const { space, apply, choiceOf, at: point } = knobSearch(moeCatalog, base, caps);
  const fast = (route: MoeRoute) => fastArms(moeCatalog, caps, { ...base.params, route });
  const int8 = (arm: Arm, ytiles: number) => point({ route: 'int8', arm, ytiles });
  const int8Arm = defaultArm(moeCatalog, caps, { ...base.params, route: 'int8' });
  const arm = fast('int8').includes(int8Arm) ? int8Arm : fast('int8')[0]!;
  // The base's row tiles where the space has them.
  const incumbent = (int8(arm, Number(base.params.ytiles)) ?? int8(arm, 1))!;
  const seeds = [
    ...fast('int8').flatMap((a) => [1, 4, 16].map((y) => int8(a, y))),
    ...fast('f16').flatMap((a) =>
      F16_SEEDS.map(([t, staging, ksplit]) => point({ route: 'f16', arm: a, ...t, staging, ksplit })),
    ),
  ].filter((c): c is Config => c !== undefined && space.feasible(c));
  return {
    space,
    apply,
    choiceOf,
    incumbent,
    seeds,
    // Every route and arm passes it (int8 outputs are bit-exact); the winner is checked against its own
    // route's and arm's gate on the whole output before it is stored.
    gate: COOPMAT_MATRIX_GATE,
  };
}

export const moeFamily = defineFamily<BuiltProblem>({
  catalog: moeCatalog,
  builder: (c) => (routeOf(c) === 'f16' ? F16 : INT8),
  search,
});
