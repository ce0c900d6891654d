// The expert-indexed Q4_K MMQ family (twin of mmq_q4k_id + moe_expert_rows): routed slots grouped per
// expert on the GPU, then one GEMM over (n-tiles, ytiles, experts) with gather/scatter through the lists.
import { assertNoProblems, type KernelFamily, type ProblemConfig } from '../family';
import type { AdapterCaps } from '../gpu/caps';
import {
  buildMmqKernel,
  fullPrecisionOf,
  mmqDataset,
  mmqOpaquePhases,
  mmqPhases,
  mmqPresetSpec,
  mmqQ4kIdRef,
  mmqQ8IdRef,
  mmqWeightBytes,
  once,
  OWNER_BUFFER,
  ownershipAccessor,
  type MmqPreparedProblem,
  type MmqSpec,
} from '../mmq';
import { streamSeed } from '../quant/gen';
import {
  buildMoePlan,
  moeAllProblems,
  moeAnalyticOwnership,
  MOE_ROUTING_SEED,
  moeRouting,
  usedExperts,
  type MoeProblem,
} from './moe.plan';

/** A prepared MoE problem: the MMQ prepared problem plus its routing. */
export interface MoePreparedProblem extends MmqPreparedProblem {
  problem: MoeProblem;
}

export interface MoeOverrides {
  /** Explicit routing (length tokens*topk) instead of the seeded stream, e.g. the seed test's uneven list. */
  ids?: Uint32Array;
  /** Rows-per-expert bound (default tokens, exact for distinct top-k). */
  cap?: number;
  /** The spec to run (default: the 'moe-q4k-id' preset for the config's arm and plane). */
  spec?: MmqSpec;
}

function moeSpec(c: ProblemConfig): MmqSpec {
  return mmqPresetSpec('moe-q4k-id', { m: c.m * c.topk, n: c.n, k: c.k, arm: c.arm, plane: c.plane });
}

/** The routed problem of a config: seeded distinct top-k routing unless ids are given. */
export function moeProblemOf(c: ProblemConfig, o: MoeOverrides = {}): MoeProblem {
  const ids =
    o.ids ??
    (Number.isInteger(c.topk) && c.topk >= 1 && c.topk <= c.experts && Number.isInteger(c.m) && c.m >= 1
      ? moeRouting(c.m, c.experts, c.topk, streamSeed(c.dataSeed, MOE_ROUTING_SEED))
      : new Uint32Array(0));
  return {
    tokens: c.m,
    topk: c.topk,
    experts: c.experts,
    n: c.n,
    k: c.k,
    ids,
    cap: o.cap ?? c.m,
    ytiles: c.ytiles,
  };
}

/**
 * Validate and prepare an expert-indexed problem, optionally with explicit routing or another indexed spec.
 * @example prepareMoe({ ...config, m: 12, topk: 1, experts: 5 }, caps, { ids: new Uint32Array([0, 2, 0, 4, 1, 0, 2, 4, 0, 1, 2, 0]), cap: 8 })
 */
export function prepareMoe(c: ProblemConfig, caps: AdapterCaps, o: MoeOverrides = {}): MoePreparedProblem {
  const spec = o.spec ?? moeSpec(c);
  const problem = moeProblemOf(c, o);
  assertNoProblems(moeAllProblems(spec, problem, caps));
  const slots = problem.tokens * problem.topk;
  const dataset = mmqDataset(
    spec.weights,
    slots,
    problem.experts * problem.n,
    problem.k,
    c.dataSource,
    c.dataSeed,
  );
  const inputs = dataset.inputs;
  const { ids, n, k } = problem;
  return {
    config: c,
    problem,
    plan: buildMoePlan(inputs, problem, spec, { label: 'moe-q4k-id' }),
    instrumentedPlan: buildMoePlan(inputs, problem, spec, {
      label: 'moe-q4k-id (instrumented)',
      instrument: true,
    }),
    ownerBuffer: OWNER_BUFFER,
    rows: slots,
    cols: n,
    oracle: once(() =>
      inputs.weights === 'q4k'
        ? mmqQ4kIdRef(inputs.data, ids, slots, n, k)
        : mmqQ8IdRef(inputs.data, ids, slots, n, k),
    ),
    fullPrecision: once(() => fullPrecisionOf(dataset, n, ids)),
    // Same tiles and accumulation order as mmq-q4k-rt: the seed's scale-relative gate.
    gate: { kind: 'rel-to-max', tol: 1e-6 },
    phases: mmqPhases(spec),
    analyticOwnership: ownershipAccessor(
      spec,
      slots,
      n,
      once(() => moeAnalyticOwnership(spec, problem)),
    ),
    ops: 2 * slots * n * k,
    weightBytes: mmqWeightBytes(spec.weights, usedExperts(ids, problem.experts) * n, k),
    spec,
    kernel: buildMmqKernel(spec),
    dataset,
    opaquePhases: mmqOpaquePhases(spec),
  };
}

export const moeFamily: KernelFamily = {
  id: 'moe-q4k-id',
  title: 'MoE Q4_K MMQ, expert-indexed',
  summary:
    'Routed slots grouped per expert (moe_expert_rows), then one Q4_K MMQ over (n-tiles, ytiles, experts) gathering A and scattering out through the slot lists: twin of mmq_q4k_id.',
  seedName: 'mmq_q4k_id',
  arms: ['scalar', 'dp4a', 'subgroup-matrix'],
  knobs: ['m', 'n', 'k', 'experts', 'topk', 'ytiles'],
  defaults: {
    m: 32,
    n: 128,
    k: 512,
    experts: 8,
    topk: 2,
    ytiles: 1,
    tile: { wm: 2, wn: 4, rm: 1, rn: 1 },
    dataSource: 'seed',
    dataSeed: 0,
  },
  validate: (c, caps) => moeAllProblems(moeSpec(c), moeProblemOf(c), caps),
  prepare: (c, caps) => prepareMoe(c, caps),
};
