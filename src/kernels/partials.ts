// An output element broken down by k-block (the error drill-down): what each block of the reduction
// contributes, the quantized operand blocks and scales that feed it, and where a GPU result departs from
// the running sum. A family computes the breakdown next to its oracle, with the oracle's own arithmetic,
// so the last running sum IS the oracle's value; the app shows it and locates the deviation.
import type { Gate } from './compare';

/** A quantized block of one operand: its codes and the scales that dequantize them. */
export interface OperandBlock {
  /** The format of the block ('q8_1', 'Q8_0', 'Q4_K', ...). */
  format: string;
  /** The integer codes (Q4_K: the 4-bit codes of the 32-wide sub-block). */
  q: readonly number[];
  /** Its scales by name: q8_1 d and s, Q8_0 d, Q4_K d, dmin, sc and m of the sub-block. */
  scales: Readonly<Record<string, number>>;
}

/** One k-block's share of an output element. */
export interface KBlockPartial {
  /** The block's index along k and its first k. */
  block: number;
  k0: number;
  /** Intermediate terms of its contribution by name (isum, the products...). */
  terms: Readonly<Record<string, number>>;
  /** What it adds to the accumulator, as the oracle computes it. */
  contribution: number;
  /** The accumulator after it (the oracle's running sum). */
  cumulative: number;
  activation: OperandBlock;
  weight: OperandBlock;
}

/** An output element's k-block breakdown. */
export interface ElementPartials {
  row: number;
  col: number;
  /** Width of a k-block, in k. */
  blockK: number;
  /** How a block's contribution is formed, in one line. */
  formula: string;
  /** Where the partials come from: the CPU oracle (no kernel exposes its own partial sums yet). */
  source: 'oracle';
  blocks: KBlockPartial[];
  /** The oracle's value of the element (the last cumulative). */
  value: number;
}

/** Where a GPU result departs from the oracle's running sum (locateDeviation). */
export type Deviation =
  | { kind: 'none' }
  /** The GPU value equals the running sum after `block - 1`: blocks from `block` on are missing. */
  | { kind: 'stops'; block: number }
  /** The GPU value equals the oracle without block `block` (dropped) or with it twice (doubled). */
  | { kind: 'dropped' | 'doubled'; block: number }
  /** No single block explains it: `block`'s running sum is the closest to the GPU value. */
  | { kind: 'unexplained'; block: number; residual: number };

/**
 * Where the GPU value `gpu` departs from the oracle's running sums. `tol` is the absolute difference that
 * counts as equal to the oracle (0: bit-exact). Tried in order: equal to the oracle; equal to a prefix of
 * the sum (the reduction stopped early); the oracle minus or plus one block (a block dropped or counted
 * twice); otherwise the block whose running sum comes closest to the GPU value. The structural matches
 * allow the f32 rounding of a reduction in another order (blocks × 2^-23 × Σ|contribution|): a kernel that
 * skips a block rounds its sum differently from the oracle's value minus that block.
 * @example locateDeviation(partials, outcome.output[i], 0) // { kind: 'stops', block: 3 }
 */
export function locateDeviation(
  p: Pick<ElementPartials, 'blocks' | 'value'>,
  gpu: number,
  tol = 0,
): Deviation {
  const equal = (a: number, b: number) => Math.abs(a - b) <= tol || (Number.isNaN(a) && Number.isNaN(b));
  if (equal(gpu, p.value)) return { kind: 'none' };
  const sums = p.blocks.map((b) => b.cumulative);
  const magnitude = p.blocks.reduce((s, b) => s + Math.abs(b.contribution), 0);
  const slack = Math.max(tol, p.blocks.length * 2 ** -23 * magnitude);
  const near = (a: number, b: number) => Math.abs(a - b) <= slack;
  if (near(gpu, 0) && sums.length) return { kind: 'stops', block: 0 };
  for (let b = 0; b + 1 < sums.length; b++) if (near(gpu, sums[b]!)) return { kind: 'stops', block: b + 1 };
  for (const blk of p.blocks) {
    if (near(gpu, p.value - blk.contribution)) return { kind: 'dropped', block: blk.block };
    if (near(gpu, p.value + blk.contribution)) return { kind: 'doubled', block: blk.block };
  }
  let closest = 0;
  sums.forEach((s, b) => {
    if (Math.abs(gpu - s) < Math.abs(gpu - sums[closest]!)) closest = b;
  });
  return { kind: 'unexplained', block: closest, residual: gpu - p.value };
}

/**
 * The deviation in words, for the drill-down.
 * @example deviationText({ kind: 'dropped', block: 2 }) // 'k-block 2 is missing from the GPU sum'
 */
export function deviationText(d: Deviation): string {
  switch (d.kind) {
    case 'none':
      return 'the GPU value equals the oracle';
    case 'stops':
      return d.block === 0
        ? 'the GPU value is 0: no k-block reached the output'
        : `the GPU value is the running sum through k-block ${d.block - 1}: it first departs at k-block ${d.block} (the rest are missing)`;
    case 'dropped':
      return `k-block ${d.block} is missing from the GPU sum`;
    case 'doubled':
      return `k-block ${d.block} is counted twice in the GPU sum`;
    case 'unexplained':
      return `no single k-block explains the difference (${d.residual.toPrecision(4)}); the running sum closest to the GPU value is through k-block ${d.block}`;
  }
}

/**
 * The absolute difference a gate accepts for one element, given the largest |oracle| value: 0 for a
 * bit-exact gate, tol × max|oracle| for rel-to-max (the drill-down's "equal" in locateDeviation).
 * @example gateTolerance({ kind: 'rel-to-max', tol: 1e-3 }, 250) // 0.25
 */
export function gateTolerance(gate: Gate, refMax: number): number {
  return gate.kind === 'bit-exact' ? 0 : gate.tol * Math.max(refMax, 1e-9);
}
