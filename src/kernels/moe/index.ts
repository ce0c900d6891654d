// The MoE kernel family's only public entry: grouping kernel, routing, plans, oracles, family.
export { MOE_ROWS_BINDINGS, MOE_ROWS_THREADS, moeExpertRowsWgsl } from './moe.wgsl';
export {
  mmqQ4kIdRef,
  mmqQ8IdRef,
  moeExpertRowsRef,
  moeRoutingWords,
  splitRouting,
  type ExpertRows,
} from './moe.oracle';
export {
  buildMoePlan,
  moeAnalyticOwnership,
  moeExpertRowsPass,
  moeExpertRowsPlan,
  moeProblems,
  MOE_ROUTING_SEED,
  moeRouting,
  usedExperts,
  type MoePlanOptions,
  type MoeProblem,
} from './moe.plan';
export { moeCatalog } from './catalog';
export { buildMoe, moeFamily, moeProblemOf, type MoeOverrides } from './moe.family';
