// The f16-dequant coopmat Q4_K GEMM family ('coopmat-f16'), twin of the reference's
// mmq_q4k_coopmat_tile. Public entry of src/kernels/coopmat.
import { judge, type Gate, type Verdict } from '../compare';
import { defineFamily, familyBuilder, type DefinedFamily } from '../define';
import {
  choiceParam,
  intParam,
  ShapeError,
  type BuiltProblem,
  type OwnershipPhase,
  type ResolvedConfig,
  type RunConfig,
  type TuningSearch,
  type WeightOperand,
} from '../family';
import type { AdapterCaps } from '../gpu/caps';
import { gemmF32 } from '../oracle';
import { knobSearch } from '../tune/knobs';
import { modelActivation } from '../quant/gen';
import { dequantizeQ4K } from '../quant/q4k';
import { tileOf, type TileParams } from '../tile';
import type { Config } from '../space';
import { coopmatCatalog, COOPMAT_STAGINGS, type CoopmatStaging } from './catalog';
import { coopmatData, mmqQ4kF16RoundedRef, type CoopmatData, type DecodeRounding } from './coopmat.oracle';
import { coopmatAnalyticOwnership, coopmatPlan, COOPMAT_OWNER_BUFFER } from './coopmat.plan';
import {
  coopmatGeometry,
  stagingOf,
  streamGeometry,
  type CoopmatArm,
  type CoopmatSpec,
} from './coopmat.params';

export { mmqQ4kF16Ref, mmqQ4kF16RoundedRef, dequantQ4kRows, coopmatData, fmaF32 } from './coopmat.oracle';
export type { CoopmatData, DecodeRounding } from './coopmat.oracle';
export { buildCoopmatKernel, coopmatWgsl, type CoopmatKernel } from './coopmat.wgsl';
export {
  coopmatGeometry,
  coopmatSplitExtents,
  coopmatSpecErrors,
  coopmatWorkgroupBytes,
  SPLIT_SLACK_BYTES,
  type CoopmatArm,
  type CoopmatSpec,
  type RowMap,
} from './coopmat.params';
export type { OutRows } from './coopmat.params';
export {
  coopmatPlan,
  coopmatAnalyticOwnership,
  coopmatInputBuffers,
  coopmatOwner,
  COOPMAT_OWNER_BUFFER,
} from './coopmat.plan';
export { coopmatPrePasses } from './coopmat.split';
export { coopmatCatalog, COOPMAT_STAGINGS, STAGING_LABELS, type CoopmatStaging } from './catalog';

/**
 * The scalar arm's gate vs the exact f16 emulation (mmqQ4kF16RoundedRef): it rounds and sums exactly as
 * the emulation does (bit-exact on SwiftShader and on the H200); the tolerance admits only a compiler's
 * fused decode (DecodeRounding).
 */
export const COOPMAT_EMULATION_GATE: Gate = { kind: 'rel-to-max', tol: 1e-5 };
/**
 * The matrix arm's gate vs the same emulation: a matrix unit sums each 16-wide K chunk in its own order
 * and precision; on the H200 that is 4.2e-5 to 5.1e-5 of max |out| at k = 4096 (1.4e-6 at k = 256), so the
 * gate leaves 10x room at k = 4096, and a wrong kernel is off by O(1).
 */
export const COOPMAT_MATRIX_GATE: Gate = { kind: 'rel-to-max', tol: 5e-4 };

/** The gate of an arm's output against the emulation. */
export const coopmatGate = (arm: string): Gate =>
  arm === 'scalar' ? COOPMAT_EMULATION_GATE : COOPMAT_MATRIX_GATE;
/** The reference's gate for the f16 twin vs its f32 reference (mmq_q4k_f16_ref): operands rounded to f16. */
export const COOPMAT_REFERENCE_GATE: Gate = { kind: 'rel-to-max', tol: 5e-2 };

/** The generator spec of a validated config on an adapter: native f16 wherever the adapter has shader-f16. */
export function coopmatSpecOf(config: ResolvedConfig, caps: Pick<AdapterCaps, 'shaderF16'>): CoopmatSpec {
  const q = config.params;
  return {
    m: intParam(q, 'm'),
    n: intParam(q, 'n'),
    k: intParam(q, 'k'),
    tile: tileOf(q),
    plane: config.plane,
    arm: config.arm as CoopmatArm,
    f16: caps.shaderF16 ? 'native' : 'emulated',
    staging: choiceParam(q, 'staging', COOPMAT_STAGINGS),
    ksplit: intParam(q, 'ksplit'),
  };
}

/**
 * Judge a result against the emulation under both decode roundings and keep the better verdict: a
 * compiler may contract the decode into an fma (NVIDIA's does), which WGSL permits.
 * @example judgeEmulation(got, (d) => mmqQ4kF16RoundedRef(x, w, m, n, k, d))
 */
export function judgeEmulation(
  got: Float32Array,
  emulation: (decode: DecodeRounding) => Float32Array,
): Verdict & { decode: DecodeRounding } {
  const separate = {
    ...judge(got, emulation('separate'), COOPMAT_EMULATION_GATE),
    decode: 'separate' as const,
  };
  if (separate.mismatches === 0 && separate.relToMax === 0) return separate;
  const fused = { ...judge(got, emulation('fused'), COOPMAT_EMULATION_GATE), decode: 'fused' as const };
  return fused.relToMax < separate.relToMax ? fused : separate;
}

/** The built problem plus what the f16 tests and the hardware tier need: the spec and the data. */
export interface CoopmatBuilt extends BuiltProblem {
  spec: CoopmatSpec;
  data: () => CoopmatData;
}

/**
 * The Q4_K words of a weight operand: the f16 twin decodes Q4_K only (tensorProblems refuses another
 * format before any build).
 */
export function q4kWeight(weight: WeightOperand): CoopmatData['w'] {
  if (weight.type !== 'Q4_K')
    throw new ShapeError(`${weight.name} is ${weight.type}; the f16 twin takes Q4_K`);
  return weight.weight;
}

/**
 * The phase that stores a kernel's output: the scalar arm's registers, or the matrix arm's spill and
 * copy; the stream GEMM stores both arms from its part-sum loop.
 */
export const coopmatPhase = (spec: Pick<CoopmatSpec, 'arm' | 'staging'>): OwnershipPhase =>
  spec.arm === 'scalar' && !stagingOf(spec).stream ? 'register-accumulator' : 'scalar-epilogue';

const builder = familyBuilder('coopmat-f16', {
  spec: coopmatSpecOf,
  dataKey: (spec: CoopmatSpec) => [spec.m, spec.n, spec.k],
  data: (spec, config) => coopmatData(spec.m, spec.n, spec.k, config.data.source, config.data.seed),
  // A real tensor is the weight (tensorProblems checked it is Q4_K [n, k]); the activation is generated.
  tensorData: (spec, weight, tensor, seed): CoopmatData => ({
    x: modelActivation(spec.m, spec.k, tensor.activation, seed),
    w: q4kWeight(weight),
  }),
  plan: (spec, data, { instrument }) => coopmatPlan(spec, data, { instrument }),
  ownerBuffer: COOPMAT_OWNER_BUFFER,
  // The exact f16 emulation of what the kernel computes: both operands rounded to f16, each 32-block
  // summed in f32 in K order.
  oracle: (spec, d) => mmqQ4kF16RoundedRef(d.x, d.w, spec.m, spec.n, spec.k, 'separate', spec.ksplit),
  oracleRows(spec, d, rows) {
    const { n, k } = spec;
    const picked = new Float32Array(rows.length * k);
    rows.forEach((r, i) => picked.set(d.x.subarray(r * k, (r + 1) * k), i * k));
    return mmqQ4kF16RoundedRef(picked, d.w, rows.length, n, k, 'separate', spec.ksplit);
  },
  phases: (spec) => [coopmatPhase(spec)],
  ownership: (spec) => coopmatAnalyticOwnership(spec),
  facts(spec, data) {
    const { m, n, k } = spec;
    const g = stagingOf(spec).stream ? streamGeometry(spec) : coopmatGeometry(spec);
    return {
      rows: m,
      cols: n,
      // The f32 GEMM on the unquantized activation and the dequantized weight: what the f16 rounding costs.
      fullPrecision: () => gemmF32(data().x, dequantizeQ4K(data().w, n, k), m, n, k),
      fullPrecisionGate: COOPMAT_REFERENCE_GATE,
      gate: coopmatGate(spec.arm),
      ops: 2 * m * n * k,
      weightBytes: (n * k * 144) / 256,
      outputTile: { rows: g.bm, cols: g.bn },
    };
  },
  expose: (spec, data) => ({ spec, data }),
});

/**
 * Tile and staging pairs that were the fastest coopmat plan at some prefill shape on the H200
 * (docs/decisions/0010-tuner-seeds-and-finalists.md): large m wants big register tiles with the weight decoded once,
 * small m small blocks with B decoded in the GEMM. Seeding them puts each shape class's known winner in
 * generation 0, and the search has to beat it.
 */
const PRIORS: readonly [TileParams, CoopmatStaging, number][] = [
  [{ wm: 8, wn: 1, rm: 2, rn: 8 }, 'fused-prepass', 1],
  [{ wm: 4, wn: 1, rm: 4, rn: 4 }, 'fused-prepass', 1],
  [{ wm: 8, wn: 1, rm: 2, rn: 4 }, 'prepass', 1],
  [{ wm: 4, wn: 1, rm: 1, rn: 4 }, 'in-gemm', 1],
  [{ wm: 2, wn: 1, rm: 1, rn: 2 }, 'in-gemm', 1],
  [{ wm: 2, wn: 2, rm: 1, rn: 1 }, 'fused-prepass', 1],
  [{ wm: 4, wn: 1, rm: 1, rn: 2 }, 'prepass', 1],
  // Small m: too few output tiles to fill the GPU; split-K multiplies the workgroups streaming the weight,
  // and the stream GEMM keeps several stages of weight words in flight in each of its K parts.
  [{ wm: 2, wn: 1, rm: 1, rn: 2 }, 'in-gemm', 4],
  [{ wm: 2, wn: 2, rm: 1, rn: 2 }, 'in-gemm', 8],
  [{ wm: 1, wn: 1, rm: 2, rn: 1 }, 'stream', 4],
  [{ wm: 1, wn: 1, rm: 1, rn: 1 }, 'stream', 8],
  [{ wm: 1, wn: 1, rm: 2, rn: 2 }, 'stream', 4],
  [{ wm: 1, wn: 2, rm: 2, rn: 1 }, 'stream', 4],
];

/** The reference's tile, where every hunt starts. */
const INCUMBENT_TILE: TileParams = { wm: 2, wn: 4, rm: 1, rn: 1 };

/** The coopmat search: (WM, WN, RM, RN) x staging x the arms this adapter has x split-K (catalog.ts). */
function search(base: RunConfig, caps: AdapterCaps): TuningSearch {
  const { space, apply, choiceOf, at: point } = knobSearch(coopmatCatalog, base, caps);
  const at = (tile: TileParams, staging: CoopmatStaging, ksplit = 1) => point({ ...tile, staging, ksplit });
  const seeds = [
    ...COOPMAT_STAGINGS.filter((s) => s !== 'prepass').map((s) => at(INCUMBENT_TILE, s)),
    ...PRIORS.map(([t, s, ks]) => at(t, s, ks)),
  ].filter((c): c is Config => c !== undefined && space.feasible(c));
  return {
    space,
    apply,
    choiceOf,
    incumbent: at(INCUMBENT_TILE, 'prepass')!,
    seeds,
    // The looser of the arms' gates; a winner is checked against its own arm's gate before it is stored.
    gate: COOPMAT_MATRIX_GATE,
  };
}

/** The family: f16-dequant coopmat Q4_K GEMM with a comptime (wm, wn, rm, rn) tile and a staging. */
export const coopmatF16Family: DefinedFamily<CoopmatBuilt> = defineFamily({
  catalog: coopmatCatalog,
  builder,
  search,
});
