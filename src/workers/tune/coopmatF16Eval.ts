// The f16 coopmat twin's fitness (the seed's CoopmatF16Eval): the int8 MMQ's tile space plus WM = 8 and
// the staging (coopmatTileSpace), a different kernel (src/kernels/coopmat): f32 activation rounded to
// f16, Q4_K weight decoded with the scale folded in, gated against the full-precision f32 reference
// (mmqQ4kF16Ref) at the f16 tolerance 5e-2. A config runs the family's whole plan for its staging
// (coopmatPlan: the split plan's pre-passes too), so stagings are timed as the playground runs them.
import {
  coopmatData,
  coopmatMatrixUnsupported,
  coopmatPlan,
  defaultCoopmatStaging,
  mmqQ4kF16Ref,
  type CoopmatArm,
} from '../../kernels/coopmat';
import type { AdapterCaps } from '../../kernels/gpu/caps';
import { bufferBytes } from '../../kernels/gpu/plan';
import { coopmatStaticTier, F16_TUNE_GATE, coopmatTileSpace, tileName, type Space } from '../../kernels/tune';
import { pickRows, Q4kTileEval, q4kTileSetup, q4kTileProblem, type TileEvalOptions } from './q4kTileEval';

export interface CoopmatF16EvalOptions extends TileEvalOptions {
  /** Defaults to 'subgroup-matrix' where the adapter has f16 subgroup matrices, else 'scalar'. */
  arm?: CoopmatArm;
}

/** The coopmat arm an adapter runs by default. */
export function defaultCoopmatArm(caps: AdapterCaps): CoopmatArm {
  return coopmatMatrixUnsupported(caps) === undefined ? 'subgroup-matrix' : 'scalar';
}

/**
 * Cold-weight-streamed, f16-tolerance-gated fitness of the coopmat plans over coopmatTileSpace().
 * @example const ev = CoopmatF16Eval.create(device, caps, { m: 16, n: 16, k: 256, banks: 2, repeats: 1 });
 */
export class CoopmatF16Eval extends Q4kTileEval {
  /** Upload the resident inputs and banks and compute the full-precision oracle on bank 0. */
  static create(
    device: GPUDevice,
    caps: AdapterCaps,
    opts: CoopmatF16EvalOptions,
    space: Space = coopmatTileSpace(),
  ): CoopmatF16Eval {
    const problem = q4kTileProblem(opts, caps);
    const { m, n, k, plane } = problem;
    const arm = opts.arm ?? defaultCoopmatArm(caps);
    const dataSeed = opts.dataSeed ?? 0;
    const tier = coopmatStaticTier(caps, { ...problem, arm, dataSeed });
    const f16 = tier.spec({ wm: 1, wn: 1, rm: 1, rn: 1 }).f16;
    const data = coopmatData(m, n, k, 'seed', dataSeed);
    const setup = q4kTileSetup(device, space, opts, {
      label: 'mmq_q4k_coopmat',
      gate: F16_TUNE_GATE,
      resident: { x: data.x, wsc: data.w.scales, wd: data.w.d, wdm: data.w.dmin },
      qs: data.w.qs,
      oracle: (rows) =>
        rows
          ? mmqQ4kF16Ref(pickRows(data.x, rows, k), data.w, rows.length, n, k)
          : mmqQ4kF16Ref(data.x, data.w, m, n, k),
      // The tier's spec and check run the arm's default staging where a space does not search one.
      kernelFor: ({ tile, staging }) => {
        const plan = coopmatPlan(tier.spec(tile, staging), data);
        return {
          label: `mmq_q4k_coopmat ${tileName(tile)} ${staging ?? defaultCoopmatStaging(arm)} ${arm} f16-${f16}`,
          passes: plan.passes,
          // What the passes hand each other (the split plan's wh and xt); inputs and out are the evaluator's.
          scratch: plan.buffers
            .filter((b) => !b.data && b.name !== plan.output)
            .map((b) => ({ name: b.name, bytes: bufferBytes(b) })),
        };
      },
      staticCheck: ({ tile, staging }) => tier.check(tile, staging),
    });
    return new CoopmatF16Eval(setup, `${arm} f16-${f16}`, plane);
  }
}
