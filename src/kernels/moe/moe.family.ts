// The expert-indexed Q4_K MMQ family (twin of mmq_q4k_id + moe_expert_rows): routed slots grouped per
// expert on the GPU, then one GEMM over (n-tiles, ytiles, experts) with gather/scatter through the lists.
import {
  assertNoProblems,
  intParam,
  tensorProblems,
  type WeightOperand,
  type BuiltProblem,
  type KernelFamily,
  type ResolvedConfig,
} from '../family';
import type { AdapterCaps } from '../gpu/caps';
import { planLimitProblems } from '../gpu/plan';
import {
  fullPrecisionOf,
  mmqDataset,
  mmqTensorDataset,
  mmqPhases,
  mmqPresetSpec,
  mmqQ4kIdRef,
  mmqQ8IdRef,
  mmqWeightBytes,
  OWNER_BUFFER,
  ownershipAccessor,
  type MmqDataset,
  type MmqSpec,
} from '../mmq';
import { DatasetMemo } from '../memo';
import { selectRows } from '../oracle';
import { streamSeed } from '../quant/gen';
import { moeCatalog } from './catalog';
import {
  buildMoePlan,
  moeAnalyticOwnership,
  MOE_ROUTING_SEED,
  moeRouting,
  usedExperts,
  type MoeProblem,
} from './moe.plan';

export interface MoeOverrides {
  /** Explicit routing (length tokens*topk) instead of the seeded stream, e.g. the reference test's uneven list. */
  ids?: Uint32Array;
  /** Rows-per-expert bound (default tokens, exact for distinct top-k). */
  cap?: number;
  /** The indexed spec to run (default: the 'moe-q4k-id' preset; tests run its Q8_0 variant). */
  spec?: MmqSpec;
}

/** The routed problem of a validated config: seeded distinct top-k routing unless ids are given. */
export function moeProblemOf(c: ResolvedConfig, o: MoeOverrides = {}): MoeProblem {
  const [tokens, n, k, experts, topk, ytiles] = ['tokens', 'n', 'k', 'experts', 'topk', 'ytiles'].map((key) =>
    intParam(c.params, key),
  ) as [number, number, number, number, number, number];
  const ids = o.ids ?? moeRouting(tokens, experts, topk, streamSeed(c.data.seed, MOE_ROUTING_SEED));
  return { tokens, topk, experts, n, k, ids, cap: o.cap ?? tokens, ytiles };
}

const memo = new DatasetMemo<MmqDataset>();

/**
 * Validate and build an expert-indexed problem, optionally with explicit routing.
 * @example buildMoe({ ...config, params: { ...p, tokens: 12, topk: 1, experts: 5 } }, caps, { ids: new Uint32Array([0, 2, 0, 4, 1, 0, 2, 4, 0, 1, 2, 0]), cap: 8 })
 */
export function buildMoe(
  c: ResolvedConfig,
  caps: AdapterCaps,
  o: MoeOverrides = {},
  weight?: WeightOperand,
): BuiltProblem & { problem: MoeProblem; spec: MmqSpec } {
  assertNoProblems([...moeCatalog.validate(c, caps), ...tensorProblems(moeCatalog, c, weight)]);
  const problem = moeProblemOf(c, o);
  const slots = problem.tokens * problem.topk;
  const spec = mmqPresetSpec('moe-q4k-id', {
    m: slots,
    n: problem.n,
    k: problem.k,
    arm: c.arm,
    plane: c.plane,
  });
  const { ids, n, k, experts } = problem;
  const tensor = c.data.tensor;
  const dataset = () =>
    memo.get(JSON.stringify([spec.weights, slots, experts, n, k, c.data]), () =>
      c.data.source === 'tensor' && weight && tensor
        ? mmqTensorDataset(weight, slots, tensor.activation, c.data.seed)
        : mmqDataset(spec.weights, slots, experts * n, k, c.data.source, c.data.seed),
    );
  const plan = buildMoePlan(() => dataset().inputs, problem, spec, { label: 'moe-q4k-id' });
  assertNoProblems(planLimitProblems(plan, caps.limits));
  let oracle: Float32Array | undefined;
  let analytic: ReturnType<typeof moeAnalyticOwnership> | undefined;
  return {
    config: c,
    problem,
    spec,
    plan,
    instrumentedPlan: () =>
      buildMoePlan(() => dataset().inputs, problem, spec, {
        label: 'moe-q4k-id (instrumented)',
        instrument: true,
      }),
    ownerBuffer: OWNER_BUFFER,
    facts: {
      rows: slots,
      cols: n,
      oracle: (rows) => {
        const inputs = dataset().inputs;
        oracle ??=
          inputs.weights === 'q4k'
            ? mmqQ4kIdRef(inputs.data, ids, slots, n, k)
            : mmqQ8IdRef(inputs.data, ids, slots, n, k);
        return selectRows(oracle, rows, n);
      },
      fullPrecision: () => fullPrecisionOf(dataset(), n, ids),
      // int8 sums are exact and the epilogue runs in the oracle's order, as in the dense kernels.
      gate: { kind: 'bit-exact' },
      phases: mmqPhases(spec),
      analyticOwnership: ownershipAccessor(
        spec,
        slots,
        n,
        () => (analytic ??= moeAnalyticOwnership(spec, problem)),
      ),
      ops: 2 * slots * n * k,
      // Rows are scattered through the slot lists: the output has no tile grid (no outputTile).
      weightBytes: mmqWeightBytes(spec.weights, usedExperts(ids, experts) * n, k),
    },
  };
}

export const moeFamily: KernelFamily = {
  ...moeCatalog,
  build: (c, caps, weight) => buildMoe(c, caps, {}, weight),
};
