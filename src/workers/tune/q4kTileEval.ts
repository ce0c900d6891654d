// What the two Q4_K tile evaluators (MmqQ4kEval, CoopmatF16Eval) share: their options and shape check,
// the weight's `wqs` words uploaded as cold banks, the oracle on a row sample for large shapes, and the
// rest of the TileEvaluator setup, filled the same way around each one's kernel, data, oracle and gate.
import type { Gate } from '../../kernels/compare';
import { assertNoProblems, positiveIntegerProblems } from '../../kernels/family';
import { planeWidth, type AdapterCaps } from '../../kernels/gpu/caps';
import { coldBank } from '../../kernels/quant/gen';
import {
  choiceOf,
  type Space,
  type StaticTierOptions,
  type StaticVerdict,
  type TileChoice,
} from '../../kernels/tune';
import { gateRows, TileEvaluator, type TileEvalSetup, type TilePlan } from './tileEval';

export interface TileEvalOptions {
  m: number;
  n: number;
  k: number;
  /** Distinct weight copies rotated per timed dispatch (>= 1; bank 0 is the oracle's). */
  banks?: number;
  /** Timed passes per measurement; the minimum wins. */
  repeats?: number;
  /** Plane width to partition by; defaults to the adapter's (planeWidth). */
  plane?: number;
  /** Workgroup-storage occupancy budget in bytes (defaults to the adapter's limit). */
  storageBudget?: number;
  /** 0 = the seed's generator constant. */
  dataSeed?: number;
  /** CPU oracle multiply-adds before the gate samples rows (default ORACLE_MAC_BUDGET). */
  oracleMacBudget?: number;
  /** Untimed GPU work (ms) before each timing (default 0; the worker passes clockWarmMs(caps)). */
  warmMs?: number;
  cancelled?: () => boolean;
}

// The seed's second bank salts with 0x9E3779B1; further banks use other odd constants.
const BANK_SALTS = [0x9e3779b1, 0x85ebca6b, 0xc2b2ae35, 0x27d4eb2f, 0x165667b1, 0xd3a2646c, 0xfd7046c5];

/** Weight banks: bank 0 is `qs` itself, bank i >= 1 is a cold copy (coldBank) with a distinct salt. */
export function weightBanks(qs: Uint32Array, count: number): Uint32Array[] {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`banks = ${count}: need an integer >= 1`);
  return Array.from({ length: count }, (_, i) =>
    i === 0
      ? qs
      : coldBank(
          qs,
          (BANK_SALTS[(i - 1) % BANK_SALTS.length]! + 2 * Math.floor((i - 1) / BANK_SALTS.length)) >>> 0,
        ),
  );
}

/** Rows `rows` of a [rows, k] matrix with `width` values per row. */
export function pickRows<T extends Int8Array | Float32Array>(
  a: T,
  rows: readonly number[],
  width: number,
): T {
  const out = new (a.constructor as { new (n: number): T })(rows.length * width);
  rows.forEach((r, i) => out.set(a.subarray(r * width, (r + 1) * width), i * width));
  return out;
}

/** Throw ShapeError for a problem shape no Q4_K tile kernel can take. */
export function assertQ4kShape(m: number, n: number, k: number): void {
  const p = positiveIntegerProblems({ m, n, k }, Number.isSafeInteger);
  if (!p.length && k % 256 !== 0) p.push(`k = ${k} is not a multiple of 256 (the Q4_K super-block)`);
  assertNoProblems(p);
}

/**
 * The problem an evaluator builds for, as its static tier takes it: the shape (ShapeError when no Q4_K
 * tile kernel can take it), the plane (the adapter's unless given), the storage budget when set.
 * @example const tier = mmqQ4kStaticTier(caps, { ...q4kTileProblem(opts, caps), arm });
 */
export function q4kTileProblem(opts: TileEvalOptions, caps: AdapterCaps): StaticTierOptions {
  const { m, n, k, storageBudget } = opts;
  assertQ4kShape(m, n, k);
  const plane = opts.plane ?? planeWidth(caps);
  return { m, n, k, plane, ...(storageBudget === undefined ? {} : { storageBudget }) };
}

/** What a Q4_K tile evaluator supplies around the shared discipline. */
export interface Q4kTileParts {
  /** 'mmq_q4k_tile' etc., for labels and messages. */
  label: string;
  gate: Gate;
  /** Inputs other than the bank-rotated weight words (bound as `wqs`). */
  resident: Readonly<Record<string, ArrayBufferView>>;
  /** The weight words of bank 0 (what the oracle multiplies). */
  qs: Uint32Array;
  /** The oracle of output rows `rows` ([rows.length, n]), or of every row when `rows` is undefined. */
  oracle(rows: readonly number[] | undefined): Float32Array;
  /** The passes of a config's tile (and staging, where the space searches one). */
  kernelFor(choice: TileChoice): TilePlan;
  staticCheck(choice: TileChoice): StaticVerdict;
}

/**
 * The TileEvaluator setup of a Q4_K tile kernel writing `out` [m, n]: the weight words rotated over
 * `opts.banks` (2) cold banks, the oracle on gateRows' sample, `opts.repeats` (3) timed passes.
 * @example super(q4kTileSetup(device, space, opts, { label: 'mmq_q4k_tile', gate, resident, qs, oracle, kernelFor, staticCheck }))
 */
export function q4kTileSetup(
  device: GPUDevice,
  space: Space,
  opts: TileEvalOptions,
  parts: Q4kTileParts,
): TileEvalSetup {
  const { m, n, k } = opts;
  const sampled = gateRows(m, n, k, opts.oracleMacBudget);
  return {
    device,
    space,
    label: parts.label,
    gate: parts.gate,
    resident: parts.resident,
    bankBinding: 'wqs',
    banks: weightBanks(parts.qs, opts.banks ?? 2),
    outputBinding: 'out',
    rows: m,
    cols: n,
    oracle: parts.oracle(sampled),
    ...(sampled ? { oracleRows: sampled } : {}),
    repeats: opts.repeats ?? 3,
    ...(opts.warmMs ? { warmMs: opts.warmMs } : {}),
    kernelFor: (cfg) => parts.kernelFor(choiceOf(space, cfg)),
    staticCheck: (cfg) => parts.staticCheck(choiceOf(space, cfg)),
    ...(opts.cancelled ? { cancelled: opts.cancelled } : {}),
  };
}

/** A Q4_K tile evaluator: the TileEvaluator plus the arm and plane its kernels are built for. */
export class Q4kTileEval<A extends string = string> extends TileEvaluator {
  readonly arm: A;
  readonly plane: number;

  protected constructor(setup: TileEvalSetup, arm: A, plane: number) {
    super(setup);
    this.arm = arm;
    this.plane = plane;
  }
}
