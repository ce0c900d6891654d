// The f16-dequant coopmat Q4_K GEMM family ('coopmat-f16'), twin of the seed's mmq_q4k_coopmat_tile.
// Public entry of src/kernels/coopmat.
import { judge, type Gate, type Verdict } from '../compare';
import {
  assertNoProblems,
  COOPMAT_STAGINGS,
  dataSourceProblems,
  type CoopmatStaging,
  type KernelFamily,
  type OwnershipPhase,
  type PreparedProblem,
  type ProblemConfig,
} from '../family';
import { findMatrixConfig, SUBGROUP_MATRIX_FEATURE, type AdapterCaps, type Arm } from '../gpu/caps';
import {
  coopmatData,
  mmqQ4kF16Ref,
  mmqQ4kF16RoundedRef,
  type CoopmatData,
  type DecodeRounding,
} from './coopmat.oracle';
import { coopmatAnalyticOwnership, coopmatPlan, COOPMAT_OWNER_BUFFER } from './coopmat.plan';
import {
  coopmatGeometry,
  coopmatSpecErrors,
  coopmatWorkgroupBytes,
  type CoopmatArm,
  type CoopmatSpec,
} from './coopmat.wgsl';
import { SPLIT_STAGE_DEFAULT } from './coopmat.split';

export { mmqQ4kF16Ref, mmqQ4kF16RoundedRef, dequantQ4kRows, coopmatData, fmaF32 } from './coopmat.oracle';
export type { CoopmatData, DecodeRounding } from './coopmat.oracle';
export {
  buildCoopmatKernel,
  buildCoopmatXToF16Kernel,
  coopmatXhRows,
  coopmatWgsl,
  coopmatWorkgroupBytes,
  coopmatGeometry,
  coopmatSpecErrors,
  COOPMAT_BINDINGS,
  COOPMAT_K_STAGES,
} from './coopmat.wgsl';
export type { CoopmatSpec, CoopmatArm, CoopmatKernel, CoopmatKStage } from './coopmat.wgsl';
export { coopmatPlan, coopmatAnalyticOwnership, COOPMAT_OWNER_BUFFER } from './coopmat.plan';
export {
  buildCoopmatFusedPrePassKernel,
  buildCoopmatWToF16Kernel,
  buildCoopmatXTiledKernel,
  coopmatSplitExtents,
  coopmatSplitWgsl,
  coopmatSplitStageErrors,
  fragmentTileIndex,
  COOPMAT_SPLIT_BINDINGS,
  COOPMAT_SPLIT_Q4K_BINDINGS,
  coopmatSplitBindings,
  SPLIT_STAGE_DEFAULT,
  SPLIT_SLACK_BYTES,
} from './coopmat.split';
export type { SplitStage, WPrePassPer } from './coopmat.split';

/** The seed's gate for the f16 twin vs the full-precision mmq_q4k_f16_ref. */
export const COOPMAT_SEED_GATE: Gate = { kind: 'rel-to-max', tol: 5e-2 };
/**
 * Gate vs the exact f16 emulation (mmqQ4kF16RoundedRef, under the decode rounding that fits best). The
 * scalar arm rounds and sums exactly as the emulation does (bit-exact on SwiftShader and on the H200);
 * the tolerance admits a matrix unit's own f32 summation order (measured <= 1.4e-6 on the H200).
 */
export const COOPMAT_EMULATION_GATE: Gate = { kind: 'rel-to-max', tol: 1e-5 };

/** Largest f32 accumulator array a lane may hold (rm*rn*256/plane): beyond it compilers spill or stall. */
export const COOPMAT_MAX_ACC_PER_LANE = 4096;

const COOPMAT_ARMS: readonly Arm[] = ['scalar', 'subgroup-matrix'];

/** A prepared coopmat problem, plus the exact f16 emulation the scalar arm can be gated against. */
export interface CoopmatPrepared extends PreparedProblem {
  spec: CoopmatSpec;
  data: CoopmatData;
  /** mmqQ4kF16RoundedRef of the inputs: what the normative arm computes, bit for bit. */
  emulation(decode?: DecodeRounding): Float32Array;
  emulationGate: Gate;
  /**
   * Judge a result against the emulation under both decode roundings and keep the better verdict: a
   * compiler may contract the decode into an fma (NVIDIA's does), which WGSL permits.
   */
  judgeEmulation(got: Float32Array): Verdict & { decode: DecodeRounding };
}

/**
 * The staging an arm runs by default. The matrix arm takes the split plan (coopmat.split.ts: the weight
 * decoded to f16 once, the activation tiled into 16x16 f16 fragments, then A fragments read from global
 * memory and B staged with 16-byte loads in 64-wide stages, rows padded by 8 f16): on the H200 its three
 * passes took 0.2515 ms at 2048x4096x4096, the pipelined one-pass kernel 0.8046 ms in the same run
 * (docs/benchmarks.md, "Follow-up 6"). The scalar arm keeps the one-buffer kernel, the seed's normative path.
 */
export function defaultCoopmatStaging(arm: CoopmatArm): CoopmatStaging {
  return arm === 'subgroup-matrix' ? 'prepass' : 'one-pass';
}

/**
 * The generator fields of a staging: 'one-pass' is the seed's kernel; the other three are the split
 * plan (rows padded by 8) with SPLIT_STAGE_DEFAULT, its pre-passes fused, or B decoded in the GEMM.
 * Either arm runs each of them (the scalar arm is the bit-exact reference of the split plan too).
 * @example coopmatStagingSpec('in-gemm') // { split: true, rowPad: 8, splitStage: { ...SPLIT_STAGE_DEFAULT, b: 'q4k' } }
 */
export function coopmatStagingSpec(
  staging: CoopmatStaging,
): Pick<CoopmatSpec, 'split' | 'rowPad' | 'splitStage'> {
  switch (staging) {
    case 'one-pass':
      return {};
    case 'prepass':
      return { split: true, rowPad: 8 };
    case 'fused-prepass':
      return { split: true, rowPad: 8, splitStage: { ...SPLIT_STAGE_DEFAULT, pre: 'fused' } };
    case 'in-gemm':
      return { split: true, rowPad: 8, splitStage: { ...SPLIT_STAGE_DEFAULT, b: 'q4k' } };
  }
}

/** The staging a config runs: its own, else its arm's default. */
export const coopmatStagingOf = (config: Pick<ProblemConfig, 'arm' | 'staging'>): CoopmatStaging =>
  config.staging ?? defaultCoopmatStaging(config.arm as CoopmatArm);

/** The generator spec of a config on an adapter: native f16 wherever the adapter has shader-f16. */
export function coopmatSpec(config: ProblemConfig, caps: AdapterCaps): CoopmatSpec {
  const arm = config.arm as CoopmatArm;
  return {
    m: config.m,
    n: config.n,
    k: config.k,
    tile: { ...config.tile },
    plane: config.plane,
    arm,
    f16: caps.shaderF16 ? 'native' : 'emulated',
    ...coopmatStagingSpec(coopmatStagingOf(config)),
  };
}

/** Why the f16 subgroup-matrix arm cannot run on this adapter, or undefined when it can. */
export function coopmatMatrixUnsupported(caps: AdapterCaps): string | undefined {
  if (!caps.features.includes(SUBGROUP_MATRIX_FEATURE))
    return `adapter does not expose ${SUBGROUP_MATRIX_FEATURE}`;
  if (!caps.shaderF16) return 'adapter has no shader-f16';
  if (!findMatrixConfig(caps, 'f16', 'f32', 16, 16, 16))
    return 'no f16->f32 16x16x16 subgroup-matrix config on this adapter';
  if (!caps.subgroups || caps.subgroupMinSize !== caps.subgroupMaxSize)
    return 'subgroup size varies on this adapter; the matrix arm needs a fixed plane';
  return undefined;
}

function validateCoopmat(config: ProblemConfig, caps: AdapterCaps): string[] {
  const errs: string[] = [];
  if (config.kernel !== 'coopmat-f16') errs.push(`config is for ${config.kernel}, not coopmat-f16`);
  if (config.staging !== undefined && !COOPMAT_STAGINGS.includes(config.staging))
    errs.push(`unknown staging '${String(config.staging)}' (one of ${COOPMAT_STAGINGS.join(', ')})`);
  if (!COOPMAT_ARMS.includes(config.arm)) {
    errs.push(
      `coopmat-f16 has no '${config.arm}' arm (it contracts f16, not int8: arms are ${COOPMAT_ARMS.join(', ')})`,
    );
    return errs;
  }
  const spec = coopmatSpec(config, caps);
  if (spec.arm === 'subgroup-matrix') {
    const why = coopmatMatrixUnsupported(caps);
    if (why) errs.push(`subgroup-matrix arm unavailable: ${why}`);
    else if (config.plane !== caps.subgroupMaxSize) {
      errs.push(
        `the subgroup-matrix arm needs plane = the hardware subgroup size ${caps.subgroupMaxSize}, got ${config.plane}`,
      );
    }
    if (why) return errs;
  }
  const specErrs = coopmatSpecErrors(spec);
  errs.push(...specErrs);
  if (specErrs.length) return errs;
  const g = coopmatGeometry(spec);
  const L = caps.limits;
  const maxWg = Math.min(L.maxComputeInvocationsPerWorkgroup, L.maxComputeWorkgroupSizeX);
  if (g.threads > maxWg)
    errs.push(
      `workgroup of ${g.nwarp} planes x ${spec.plane} = ${g.threads} invocations exceeds the adapter's ${maxWg}`,
    );
  const bytes = coopmatWorkgroupBytes(spec);
  if (bytes > L.maxComputeWorkgroupStorageSize) {
    errs.push(
      `tile BM ${g.bm} x BN ${g.bn} needs ${bytes} bytes of workgroup memory, the adapter has ${L.maxComputeWorkgroupStorageSize}`,
    );
  }
  const accPerLane = spec.tile.rm * spec.tile.rn * g.per;
  if (spec.arm === 'scalar' && accPerLane > COOPMAT_MAX_ACC_PER_LANE) {
    errs.push(
      `register tile rm ${spec.tile.rm} x rn ${spec.tile.rn} at plane ${spec.plane} holds ${accPerLane} f32 per lane (max ${COOPMAT_MAX_ACC_PER_LANE})`,
    );
  }
  const gx = Math.ceil(spec.n / g.bn);
  const gy = Math.ceil(spec.m / g.bm);
  if (gx > L.maxComputeWorkgroupsPerDimension || gy > L.maxComputeWorkgroupsPerDimension) {
    errs.push(
      `grid ${gx} x ${gy} exceeds the adapter's ${L.maxComputeWorkgroupsPerDimension} workgroups per dimension`,
    );
  }
  const biggest = Math.max(spec.m * spec.k, spec.m * spec.n) * 4;
  if (biggest > L.maxStorageBufferBindingSize)
    errs.push(
      `a ${biggest}-byte buffer exceeds maxStorageBufferBindingSize ${L.maxStorageBufferBindingSize}`,
    );
  errs.push(...dataSourceProblems(config));
  return errs;
}

function prepareCoopmat(config: ProblemConfig, caps: AdapterCaps): CoopmatPrepared {
  assertNoProblems(validateCoopmat(config, caps));
  const spec = coopmatSpec(config, caps);
  const { m, n, k } = spec;
  const geometry = coopmatGeometry(spec);
  const data = coopmatData(m, n, k, config.dataSource, config.dataSeed);
  const phase: OwnershipPhase = spec.arm === 'scalar' ? 'register-accumulator' : 'scalar-epilogue';
  let oracle: Float32Array | undefined;
  const emulations: Partial<Record<DecodeRounding, Float32Array>> = {};
  const emulation = (decode: DecodeRounding = 'separate') =>
    (emulations[decode] ??= mmqQ4kF16RoundedRef(data.x, data.w, m, n, k, decode));
  return {
    config,
    spec,
    data,
    plan: coopmatPlan(spec, data),
    instrumentedPlan: coopmatPlan(spec, data, { instrument: true }),
    ownerBuffer: COOPMAT_OWNER_BUFFER,
    rows: m,
    cols: n,
    oracle: () => (oracle ??= mmqQ4kF16Ref(data.x, data.w, m, n, k)),
    gate: COOPMAT_SEED_GATE,
    emulation,
    emulationGate: COOPMAT_EMULATION_GATE,
    judgeEmulation(got: Float32Array) {
      const separate = {
        ...judge(got, emulation('separate'), COOPMAT_EMULATION_GATE),
        decode: 'separate' as const,
      };
      if (separate.mismatches === 0 && separate.relToMax === 0) return separate;
      const fused = { ...judge(got, emulation('fused'), COOPMAT_EMULATION_GATE), decode: 'fused' as const };
      return fused.relToMax < separate.relToMax ? fused : separate;
    },
    phases: [phase],
    analyticOwnership(p: OwnershipPhase) {
      if (p !== phase)
        throw new RangeError(
          `coopmat-f16 (${spec.arm} arm) stores its output in the '${phase}' phase, not '${p}'`,
        );
      return coopmatAnalyticOwnership(spec);
    },
    ops: 2 * m * n * k,
    weightBytes: (n * k * 144) / 256,
    outputTile: { rows: geometry.bm, cols: geometry.bn },
  };
}

/** The coopmat family's contract: a KernelFamily whose prepare also gives the f16 emulation. */
export interface CoopmatFamily extends KernelFamily {
  prepare(config: ProblemConfig, caps: AdapterCaps): CoopmatPrepared;
}

/** The family object: f16-dequant coopmat Q4_K GEMM, comptime (wm, wn, rm, rn) tile. */
export const coopmatF16Family: CoopmatFamily = {
  id: 'coopmat-f16',
  title: 'f16 coopmat Q4_K GEMM',
  summary:
    'out = x @ W^T with Q4_K W decoded to f16 (scale folded in), f16 operands, f32 accumulators held across K; comptime wm x wn x rm x rn tile (mmq_q4k_coopmat_tile).',
  seedName: 'mmq_q4k_coopmat_tile',
  arms: COOPMAT_ARMS,
  knobs: ['m', 'n', 'k', 'tile', 'staging'],
  defaults: {
    m: 64,
    n: 64,
    k: 256,
    experts: 1,
    topk: 1,
    ytiles: 1,
    tile: { wm: 2, wn: 2, rm: 1, rn: 1 },
    dataSource: 'seed',
    dataSeed: 0,
  },
  validate: validateCoopmat,
  prepare: prepareCoopmat,
};
