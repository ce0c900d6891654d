// The int8 Q4_K MMQ tile fitness (the seed's MmqQ4kEval): the 'mmq-q4k-tile' kernel of
// src/kernels/mmq (static dims, tail guards, register accumulator) for each (WM, WN, RM, RN), gated
// against mmqQ4kRef at 1e-3 (int8 accumulation is exact; only the f32 add order differs).
import { defaultInt8Arm, type AdapterCaps, type Arm } from '../../kernels/gpu/caps';
import { buildMmqKernel, mmqDataset, mmqInputBuffers, mmqPass, mmqQ4kRef } from '../../kernels/mmq';
import type { MmqQ4kData } from '../../kernels/quant/gen';
import { INT8_TUNE_GATE, mmqQ4kSpace, mmqQ4kStaticTier, tileName, type Space } from '../../kernels/tune';
import { pickRows, Q4kTileEval, q4kTileSetup, q4kTileProblem, type TileEvalOptions } from './q4kTileEval';
import { onePass } from './tileEval';

export interface MmqQ4kEvalOptions extends TileEvalOptions {
  /** Contraction arm; defaults to the fastest the adapter has (defaultInt8Arm). */
  arm?: Arm;
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

/**
 * Cold-weight-streamed, 1e-3-gated fitness of the int8 Q4_K tile kernel over mmqQ4kSpace().
 * @example
 * const ev = MmqQ4kEval.create(device, caps, { m: 16, n: 16, k: 256, banks: 2, repeats: 1 });
 * const r = await new Evolution({ population: 8, generations: 3, measureIters: 1 }).run(ev.space, ev, 0xc0ffee);
 * ev.destroy();
 */
export class MmqQ4kEval extends Q4kTileEval<Arm> {
  /** Upload the resident inputs and banks and compute the oracle on bank 0. Throws ShapeError on a bad shape. */
  static create(
    device: GPUDevice,
    caps: AdapterCaps,
    opts: MmqQ4kEvalOptions,
    space: Space = mmqQ4kSpace(),
  ): MmqQ4kEval {
    const problem = q4kTileProblem(opts, caps);
    const { m, n, k, plane } = problem;
    const arm = opts.arm ?? defaultInt8Arm(caps);
    const tier = mmqQ4kStaticTier(caps, { ...problem, arm });
    const ds = mmqDataset('q4k', m, n, k, 'seed', opts.dataSeed ?? 0);
    if (ds.inputs.weights !== 'q4k') throw new Error('mmqDataset returned non-Q4_K inputs');
    const data = ds.inputs.data;
    const resident: Record<string, ArrayBufferView> = {};
    for (const b of mmqInputBuffers(ds.inputs)) if (b.name !== 'wqs' && b.data) resident[b.name] = b.data;
    const setup = q4kTileSetup(device, space, opts, {
      label: 'mmq_q4k_tile',
      gate: INT8_TUNE_GATE,
      resident,
      qs: data.w.qs,
      oracle: (rows) =>
        rows ? mmqQ4kRef(rowsOf(data, rows, k), rows.length, n, k) : mmqQ4kRef(data, m, n, k),
      kernelFor: ({ tile }) => {
        const kern = buildMmqKernel(tier.spec(tile));
        return onePass(mmqPass(kern, kern.workgroups(m, n), false, `mmq_q4k_tile ${tileName(tile)} ${arm}`));
      },
      staticCheck: ({ tile }) => tier.check(tile),
    });
    return new MmqQ4kEval(setup, arm, plane);
  }
}
