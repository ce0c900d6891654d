// The int8 Q4_K MMQ tile fitness (the seed's MmqQ4kEval): the 'mmq-q4k-tile' kernel of
// src/kernels/mmq (static dims, tail guards, register accumulator) for each (WM, WN, RM, RN), gated
// against mmqQ4kRef at 1e-3 (int8 accumulation is exact; only the f32 add order differs).
import { ShapeError } from '../../kernels/family';
import { defaultInt8Arm, planeWidth, type AdapterCaps, type Arm } from '../../kernels/gpu/caps';
import {
  buildMmqKernel,
  mmqCapsProblems,
  mmqDataset,
  mmqInputBuffers,
  mmqPass,
  mmqPresetSpec,
  mmqQ4kRef,
  mmqShapeProblems,
  mmqSpecProblems,
  mmqWorkgroupBytes,
} from '../../kernels/mmq';
import type { MmqSpec } from '../../kernels/mmq';
import { coldBank } from '../../kernels/quant/gen';
import { INT8_TUNE_GATE, mmqQ4kSpace, tileLimits, tileName, type Space } from '../../kernels/tune';
import type { TileParams } from '../../kernels/family';
import { TileEvaluator } from './tileEval';

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
    const specOf = (tile: TileParams): MmqSpec =>
      mmqPresetSpec('mmq-q4k-tile', { m, n, k, tile, arm, plane });
    const ds = mmqDataset('q4k', m, n, k, 'seed', opts.dataSeed ?? 0);
    if (ds.inputs.weights !== 'q4k') throw new Error('mmqDataset returned non-Q4_K inputs');
    const data = ds.inputs.data;
    const resident: Record<string, ArrayBufferView> = {};
    for (const b of mmqInputBuffers(ds.inputs)) if (b.name !== 'wqs' && b.data) resident[b.name] = b.data;
    const maxPerDim = caps.limits.maxComputeWorkgroupsPerDimension;
    return new MmqQ4kEval(
      {
        device,
        space,
        label: 'mmq_q4k_tile',
        gate: INT8_TUNE_GATE,
        limits: tileLimits(
          caps,
          plane,
          opts.storageBudget === undefined ? {} : { storageBudget: opts.storageBudget },
        ),
        resident,
        bankBinding: 'wqs',
        banks: weightBanks(data.w.qs, opts.banks ?? 2),
        outputBinding: 'out',
        oracle: mmqQ4kRef(data, m, n, k),
        repeats: opts.repeats ?? 3,
        kernelFor: (tile) => {
          const kern = buildMmqKernel(specOf(tile));
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
        workgroupBytes: (tile) => mmqWorkgroupBytes(specOf(tile)),
        adapterProblems: (tile) => {
          const spec = specOf(tile);
          return [
            ...mmqSpecProblems(spec),
            ...mmqCapsProblems(spec, caps),
            ...mmqShapeProblems(spec, m, n, k, maxPerDim),
          ];
        },
        ...(opts.cancelled ? { cancelled: opts.cancelled } : {}),
      },
      arm,
      plane,
    );
  }
}
