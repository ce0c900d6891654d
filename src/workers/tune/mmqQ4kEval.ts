// The int8 Q4_K MMQ tile fitness (the seed's MmqQ4kEval): the 'mmq-q4k-tile' kernel of
// src/kernels/mmq (static dims, tail guards, register accumulator) for each (WM, WN, RM, RN), gated
// against mmqQ4kRef at 1e-3 (int8 accumulation is exact; only the f32 add order differs).
import { ShapeError } from '../../kernels/family';
import { defaultInt8Arm, planeWidth, type AdapterCaps, type Arm } from '../../kernels/gpu/caps';
import { buildMmqKernel, mmqDataset, mmqInputBuffers, mmqPass, mmqQ4kRef } from '../../kernels/mmq';
import { coldBank, type MmqQ4kData } from '../../kernels/quant/gen';
import { INT8_TUNE_GATE, mmqQ4kSpace, mmqQ4kStaticTier, tileName, type Space } from '../../kernels/tune';
import { gateRows, TileEvaluator } from './tileEval';

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
  cancelled?: () => boolean;
}

export interface MmqQ4kEvalOptions extends TileEvalOptions {
  /** Contraction arm; defaults to the fastest the adapter has (defaultInt8Arm). */
  arm?: Arm;
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

/** The activation rows `rows` of Q4_K MMQ inputs (the weight is shared): the oracle of a row sample. */
function rowsOf(d: MmqQ4kData, rows: readonly number[], k: number): MmqQ4kData {
  return {
    xq: pickRows(d.xq, rows, k),
    xs: pickRows(d.xs, rows, k / 32),
    xsum: pickRows(d.xsum, rows, k / 32),
    w: d.w,
  };
}

/** Throw ShapeError for a problem shape no Q4_K tile kernel can take. */
export function assertQ4kShape(m: number, n: number, k: number): void {
  const p: string[] = [];
  for (const [name, v] of [
    ['m', m],
    ['n', n],
    ['k', k],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 1) p.push(`${name} = ${v} must be a positive integer`);
  }
  if (!p.length && k % 256 !== 0) p.push(`k = ${k} is not a multiple of 256 (the Q4_K super-block)`);
  if (p.length) throw new ShapeError(p.join('; '));
}

/**
 * Cold-weight-streamed, 1e-3-gated fitness of the int8 Q4_K tile kernel over mmqQ4kSpace().
 * @example
 * const ev = MmqQ4kEval.create(device, caps, { m: 16, n: 16, k: 256, banks: 2, repeats: 1 });
 * const r = await new Evolution({ population: 8, generations: 3, measureIters: 1 }).run(ev.space, ev, 0xc0ffee);
 * ev.destroy();
 */
export class MmqQ4kEval extends TileEvaluator {
  readonly arm: Arm;
  readonly plane: number;

  private constructor(setup: ConstructorParameters<typeof TileEvaluator>[0], arm: Arm, plane: number) {
    super(setup);
    this.arm = arm;
    this.plane = plane;
  }

  /** Upload the resident inputs and banks and compute the oracle on bank 0. Throws ShapeError on a bad shape. */
  static create(
    device: GPUDevice,
    caps: AdapterCaps,
    opts: MmqQ4kEvalOptions,
    space: Space = mmqQ4kSpace(),
  ): MmqQ4kEval {
    const { m, n, k } = opts;
    assertQ4kShape(m, n, k);
    const arm = opts.arm ?? defaultInt8Arm(caps);
    const plane = opts.plane ?? planeWidth(caps);
    const tier = mmqQ4kStaticTier(caps, {
      m,
      n,
      k,
      plane,
      arm,
      ...(opts.storageBudget === undefined ? {} : { storageBudget: opts.storageBudget }),
    });
    const ds = mmqDataset('q4k', m, n, k, 'seed', opts.dataSeed ?? 0);
    if (ds.inputs.weights !== 'q4k') throw new Error('mmqDataset returned non-Q4_K inputs');
    const data = ds.inputs.data;
    const sampled = gateRows(m, n, k, opts.oracleMacBudget);
    const resident: Record<string, ArrayBufferView> = {};
    for (const b of mmqInputBuffers(ds.inputs)) if (b.name !== 'wqs' && b.data) resident[b.name] = b.data;
    return new MmqQ4kEval(
      {
        device,
        space,
        label: 'mmq_q4k_tile',
        gate: INT8_TUNE_GATE,
        resident,
        bankBinding: 'wqs',
        banks: weightBanks(data.w.qs, opts.banks ?? 2),
        outputBinding: 'out',
        rows: m,
        cols: n,
        oracle: sampled
          ? mmqQ4kRef(rowsOf(data, sampled, k), sampled.length, n, k)
          : mmqQ4kRef(data, m, n, k),
        ...(sampled ? { oracleRows: sampled } : {}),
        repeats: opts.repeats ?? 3,
        kernelFor: (tile) => {
          const kern = buildMmqKernel(tier.spec(tile));
          const label = `mmq_q4k_tile ${tileName(tile)} ${arm}`;
          const pass = mmqPass(kern, kern.workgroups(m, n), false, label);
          return {
            label,
            wgsl: pass.wgsl,
            entryPoint: pass.entryPoint,
            bindings: pass.bindings,
            workgroups: pass.workgroups,
          };
        },
        staticCheck: (tile) => tier.check(tile),
        ...(opts.cancelled ? { cancelled: opts.cancelled } : {}),
      },
      arm,
      plane,
    );
  }
}
