// CPU oracles of the MoE family: the slot grouping (moe_expert_rows) and, re-exported from the MMQ
// oracles, the expert-indexed GEMM (mmq_q4k_id_ref).
export { mmqQ4kIdRef, mmqQ8IdRef } from '../mmq';

export interface ExpertRows {
  /** Slots per expert [experts]. */
  counts: Uint32Array;
  /** rows[e * cap + i] = the slot of expert e's i-th row, ascending; unused entries 0. */
  rows: Uint32Array;
}

/**
 * The grouping kernel's exact result: a stable (ascending-slot) list per expert, capped at `cap`;
 * ids outside 0..experts-1 are skipped, as the kernel's guard does.
 * @example moeExpertRowsRef([0, 2, 0], 3, 2) // counts [2, 0, 1], rows [0, 2, 0, 0, 1, 0]
 */
export function moeExpertRowsRef(ids: ArrayLike<number>, experts: number, cap: number): ExpertRows {
  const counts = new Uint32Array(experts);
  const rows = new Uint32Array(experts * cap);
  for (let s = 0; s < ids.length; s++) {
    const e = ids[s]!;
    if (e >= experts) continue;
    const c = counts[e]!;
    if (c < cap) {
      rows[e * cap + c] = s;
      counts[e] = c + 1;
    }
  }
  return { counts, rows };
}

/** Words of the `routing` buffer: counts [experts] then the slot lists [experts * cap]. */
export function moeRoutingWords(experts: number, cap: number): number {
  return experts + experts * cap;
}

/**
 * Split the GPU `routing` buffer (counts at [0, experts), rows at [experts + e*cap + i]) into ExpertRows.
 * @example splitRouting(new Uint32Array(r.output), experts, cap).counts
 */
export function splitRouting(routing: Uint32Array, experts: number, cap: number): ExpertRows {
  const words = moeRoutingWords(experts, cap);
  if (routing.length !== words)
    throw new RangeError(`routing has ${routing.length} words, expected experts + experts*cap = ${words}`);
  return { counts: routing.slice(0, experts), rows: routing.slice(experts) };
}
