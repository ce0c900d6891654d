// Host plan of the expert-indexed MMQ (the reference's mmq_q4k_id_run): route tokens to experts, group
// the slots on the GPU (moe_expert_rows), then ONE GEMM launch over (n-tiles, ytiles, experts).
import { assertNoProblems, positiveIntegerProblems, ShapeError } from '../family';
import { emptyOwnership, ownerBufferSpec, type OwnershipMap } from '../gpu/instrument';
import type { BufferSpec, KernelPlan, PassSpec } from '../gpu/plan';
import { XorShift64 } from '../quant/xorshift';
import {
  buildMmqKernel,
  mmqDimsData,
  mmqGeometry,
  mmqInputBuffers,
  mmqPass,
  mmqShapeProblems,
  mmqSpecProblems,
  mmqTileOwner,
  OWNER_BUFFER,
  type MmqInputs,
  type MmqSpec,
} from '../mmq';
import { moeExpertRowsRef, moeRoutingWords } from './moe.oracle';
import { MOE_ROWS_BINDINGS, MOE_ROWS_THREADS, moeExpertRowsWgsl } from './moe.wgsl';

/** Seed of the routing stream when dataSeed is 0. */
export const MOE_ROUTING_SEED = 0x6a09e667f3bcc908n;

/** A routed MoE problem: `tokens` tokens, each sent to `topk` distinct experts (slots = tokens * topk). */
export interface MoeProblem {
  tokens: number;
  topk: number;
  experts: number;
  n: number;
  k: number;
  /** ids[t * topk + j] = the j-th expert of token t. */
  ids: Uint32Array;
  /** Max rows per expert; tokens is exact when each token's experts are distinct. */
  cap: number;
  /** Row tiles per expert in the grid (grid-stride covers the rest). */
  ytiles: number;
}

/**
 * Seeded top-k routing: every token draws `topk` DISTINCT experts (a partial Fisher-Yates shuffle).
 * @example moeRouting(4, 8, 2, MOE_ROUTING_SEED) // Uint32Array(8), ids[2t] != ids[2t+1]
 */
export function moeRouting(tokens: number, experts: number, topk: number, seed: bigint): Uint32Array {
  if (!(topk >= 1 && topk <= experts))
    throw new ShapeError(`topk = ${topk} must be in 1..experts (${experts})`);
  const r = new XorShift64(seed);
  const perm = Array.from({ length: experts }, (_, i) => i);
  const ids = new Uint32Array(tokens * topk);
  for (let t = 0; t < tokens; t++) {
    for (let j = 0; j < topk; j++) {
      const pick = j + r.nextMod(experts - j);
      [perm[j], perm[pick]] = [perm[pick]!, perm[j]!];
      ids[t * topk + j] = perm[j]!;
    }
  }
  return ids;
}

/** How tokens pick experts: 'even' (distinct top-k, evenly), 'skewed' (half the tokens take expert 0). */
export const MOE_ROUTINGS = ['even', 'skewed'] as const;
export type MoeRouting = (typeof MOE_ROUTINGS)[number];

/**
 * Seeded top-k routing where one expert is hot: a random half of the tokens take expert 0 first (their
 * other experts distinct and uniform over the rest), the others route as moeRouting does. Expert 0 then
 * serves about tokens * (1/2 + topk / (2 * experts)) slots, the load a skewed router puts on one expert.
 * @example moeSkewedRouting(2048, 8, 2, MOE_ROUTING_SEED) // expert 0 in ~1280 of 4096 slots
 */
export function moeSkewedRouting(tokens: number, experts: number, topk: number, seed: bigint): Uint32Array {
  const ids = moeRouting(tokens, experts, topk, seed);
  const r = new XorShift64(seed ^ 0x5bd1e995n);
  for (let t = 0; t < tokens; t++) {
    if (r.nextMod(2) !== 0) continue;
    const row = ids.subarray(t * topk, (t + 1) * topk);
    // Expert 0 first; the one it displaces (or the first, if 0 was already there) keeps the other's place.
    const at = row.indexOf(0);
    if (at >= 0) [row[0], row[at]] = [row[at]!, row[0]!];
    else row[0] = 0;
  }
  return ids;
}

/**
 * Why a routed problem cannot run with `spec`: routing sanity (ids in range, per-expert load within cap)
 * and the dense shape rules (k block multiple) on the GEMM. Adapter limits come from the plan. Empty = fine.
 */
export function moeProblems(spec: MmqSpec, p: MoeProblem): string[] {
  const { tokens, experts, topk, ytiles, cap } = p;
  const out = positiveIntegerProblems({ tokens, experts, topk, ytiles, cap });
  if (out.length) return out;
  if (p.topk > p.experts)
    return [`top-k = ${p.topk} > experts = ${p.experts}: each token's experts must be distinct`];
  const slots = p.tokens * p.topk;
  if (p.ids.length !== slots) out.push(`ids has ${p.ids.length} entries, expected tokens*topk = ${slots}`);
  const load = new Uint32Array(p.experts);
  for (let s = 0; s < p.ids.length; s++) {
    const e = p.ids[s]!;
    if (e >= p.experts) {
      out.push(`ids[${s}] = ${e} is not an expert (0..${p.experts - 1})`);
      break;
    }
    load[e]!++;
  }
  const worst = load.reduce((a, b) => Math.max(a, b), 0);
  if (worst > p.cap) out.push(`an expert has ${worst} slots > cap ${p.cap}: the grouping would drop rows`);
  out.push(...mmqSpecProblems(spec), ...mmqShapeProblems(spec, slots, p.n, p.k));
  if (!spec.indexed) out.unshift('the MoE plan needs an indexed spec');
  return out;
}

/**
 * The grouping pass (moe_expert_rows): one workgroup reads `ids` and the `route` uniform [slots, experts,
 * cap, 0] and writes each expert's slot count and its ascending slot list to `routing` (splitRouting).
 * @example moeExpertRowsPlan(ids, experts, cap, routing).passes // [moeExpertRowsPass()]
 */
export function moeExpertRowsPass(): PassSpec {
  return {
    label: 'moe_expert_rows',
    wgsl: moeExpertRowsWgsl(),
    entryPoint: 'main',
    workgroups: [1, 1, 1],
    bindings: MOE_ROWS_BINDINGS,
    workgroupSize: MOE_ROWS_THREADS,
    workgroupBytes: 0,
  };
}

/**
 * The grouping pass alone over `routing` (its starting contents: the kernel must zero the counts itself):
 * what the tests run to check the grouping against moeExpertRowsRef.
 * @example splitRouting(new Uint32Array((await runPlan(device, moeExpertRowsPlan(ids, 5, 8, routing))).output), 5, 8)
 */
export function moeExpertRowsPlan(
  ids: Uint32Array,
  experts: number,
  cap: number,
  routing: Uint32Array,
): KernelPlan {
  return {
    buffers: [
      { name: 'ids', kind: 'read-only-storage', data: ids },
      { name: 'routing', kind: 'storage', data: routing },
      { name: 'route', kind: 'uniform', data: new Uint32Array([ids.length, experts, cap, 0]) },
    ],
    passes: [moeExpertRowsPass()],
    output: 'routing',
    outputType: 'u32',
    mainPass: 0,
  };
}

export interface MoePlanOptions {
  instrument?: boolean;
  label?: string;
}

/**
 * Plan the two passes: moe_expert_rows (ids -> routing: counts, rows) then the indexed GEMM (the main pass).
 * `inputs` hold the [slots, k] activation and the [experts*n, k] weight bank. Throws ShapeError first.
 * @example const r = await runPlan(device, buildMoePlan(ds.inputs, problem, spec)); // out [slots, n]
 */
export function buildMoePlan(
  inputs: MmqInputs | (() => MmqInputs),
  p: MoeProblem,
  spec: MmqSpec,
  opts: MoePlanOptions = {},
): KernelPlan {
  if (!spec.indexed) throw new ShapeError('buildMoePlan needs an indexed spec');
  assertNoProblems(moeProblems(spec, p));
  const slots = p.tokens * p.topk;
  const kern = buildMmqKernel(spec);
  const instrument = opts.instrument ?? false;
  const buffers: BufferSpec[] = [
    ...mmqInputBuffers(
      spec.weights,
      slots,
      p.experts * p.n,
      p.k,
      typeof inputs === 'function' ? inputs : () => inputs,
    ),
    { name: 'ids', kind: 'read-only-storage', data: p.ids },
    // Counts and slot lists in one binding: the GEMM must fit 8 storage buffers with the owner buffer.
    { name: 'routing', kind: 'storage', size: moeRoutingWords(p.experts, p.cap) * 4 },
    { name: 'route', kind: 'uniform', data: new Uint32Array([slots, p.experts, p.cap, 0]) },
    { name: 'out', kind: 'storage', size: slots * p.n * 4 },
    { name: 'dims', kind: 'uniform', data: mmqDimsData(slots, p.n, p.k, p.cap) },
  ];
  if (instrument) buffers.push(ownerBufferSpec(slots * p.n, OWNER_BUFFER));
  const grid = kern.workgroups(slots, p.n, { ytiles: p.ytiles, experts: p.experts });
  return {
    buffers,
    passes: [moeExpertRowsPass(), mmqPass(kern, grid, instrument, opts.label ?? `mmq ${spec.weights} id`)],
    output: 'out',
    outputType: 'f32',
    mainPass: 1,
  };
}

/**
 * Analytic ownership of the [slots, n] output: slot rows[e*cap + i] is local row i of expert e, i.e.
 * row i % BM of row tile i / BM, handled by workgroup (x = col/BN, y = tile % ytiles, z = e).
 */
export function moeAnalyticOwnership(spec: MmqSpec, p: MoeProblem): OwnershipMap {
  const g = mmqGeometry(spec);
  const slots = p.tokens * p.topk;
  const nx = Math.ceil(p.n / g.bn);
  const { counts, rows } = moeExpertRowsRef(p.ids, p.experts, p.cap);
  const map = emptyOwnership(slots, p.n);
  for (let e = 0; e < p.experts; e++) {
    for (let i = 0; i < counts[e]!; i++) {
      const slot = rows[e * p.cap + i]!;
      const wy = Math.floor(i / g.bm) % p.ytiles;
      for (let c = 0; c < p.n; c++) {
        const o = mmqTileOwner(spec, i % g.bm, c % g.bn);
        const at = slot * p.n + c;
        map.count[at]!++;
        map.workgroup[at] = Math.floor(c / g.bn) + wy * nx + e * nx * p.ytiles;
        map.plane[at] = o.plane;
        map.lane[at] = o.lane;
      }
    }
  }
  return map;
}

/** Distinct experts the routing uses (their weights are what the GEMM reads). */
export function usedExperts(ids: ArrayLike<number>, experts: number): number {
  const seen = new Uint8Array(experts);
  for (let s = 0; s < ids.length; s++) if (ids[s]! < experts) seen[ids[s]!] = 1;
  return seen.reduce((a, b) => a + b, 0);
}
