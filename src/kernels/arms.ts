// The island arms every family draws from, declared once: what each needs from an adapter and the
// plane rules that go with it. A family lists the arms it has (portable first, fastest last); the
// default arm on an adapter is the last one available there.
import type { ArmDecl, FamilyCatalog, FamilyParams, ResolvedConfig, RunConfig } from './family';
import {
  findMatrixConfig,
  planeWidth,
  SUBGROUP_MATRIX_FEATURE,
  type AdapterCaps,
  type Arm,
} from './gpu/caps';

/** The portable arm: plain WGSL, the one that matches the oracle bit for bit everywhere. */
export const SCALAR_ARM: ArmDecl = { arm: 'scalar', label: 'scalar', unavailable: () => undefined };

/** int8 dot products on packed words (WGSL packed_4x8_integer_dot_product, core since Chrome 123). */
export const DP4A_ARM: ArmDecl = {
  arm: 'dp4a',
  label: 'dp4a (dot4I8Packed)',
  unavailable: (caps) =>
    caps.dot4I8Packed ? undefined : 'this browser lacks WGSL packed_4x8_integer_dot_product (dot4I8Packed)',
};

/** Why the subgroup-matrix feature itself is missing here (undefined when it is present). */
function matrixFeatureMissing(caps: AdapterCaps): string | undefined {
  if (!caps.features.includes(SUBGROUP_MATRIX_FEATURE))
    return `this adapter has no subgroup matrices (${SUBGROUP_MATRIX_FEATURE}; Chrome: --enable-unsafe-webgpu)`;
  if (!caps.subgroups || caps.subgroupMinSize !== caps.subgroupMaxSize)
    return 'this adapter varies its subgroup size; the matrix arm needs a fixed one';
  return undefined;
}

/**
 * The int8 subgroup-matrix arm needing i8 -> i32 matrices of shape `mnk(params)` (M, N, K).
 * @example int8MatrixArm(() => [16, 16, 32])
 */
export function int8MatrixArm(
  mnk: (params: FamilyParams, caps: AdapterCaps) => [number, number, number],
): ArmDecl {
  return {
    arm: 'subgroup-matrix',
    label: 'subgroup matrix (int8)',
    unavailable(caps, params) {
      const missing = matrixFeatureMissing(caps);
      if (missing) return missing;
      const [m, n, k] = mnk(params, caps);
      return findMatrixConfig(caps, 'i8', 'i32', m, n, k)
        ? undefined
        : `this adapter lists no i8 -> i32 ${m}x${n}x${k} subgroup matrix`;
    },
  };
}

/** The f16 subgroup-matrix arm (f16 x f16 -> f32 16x16x16), which also needs shader-f16. */
export const F16_MATRIX_ARM: ArmDecl = {
  arm: 'subgroup-matrix',
  label: 'subgroup matrix (f16)',
  unavailable(caps) {
    const missing = matrixFeatureMissing(caps);
    if (missing) return missing;
    if (!caps.shaderF16) return 'this adapter has no shader-f16';
    return findMatrixConfig(caps, 'f16', 'f32', 16, 16, 16)
      ? undefined
      : 'this adapter lists no f16 -> f32 16x16x16 subgroup matrix';
  },
};

/**
 * The one place a config's plane is resolved: its own, else the adapter's.
 * @example const resolved = resolveConfig(config, caps); resolved.plane // 4 on SwiftShader
 */
export function resolveConfig(config: RunConfig, caps: AdapterCaps): ResolvedConfig {
  return { ...config, plane: config.plane ?? planeWidth(caps) };
}

/**
 * Plane problems of an arm: a power of two dividing 256 (each lane owns 256/plane elements of a 16x16
 * subtile), within the adapter's workgroup, and for a matrix arm the hardware's own width.
 * @example planeProblems(48, 'scalar', caps) // ['plane width 48 must be a power of two from 1 to 256']
 */
export function planeProblems(plane: number, arm: Arm, caps?: AdapterCaps): string[] {
  if (!Number.isInteger(plane) || plane < 1 || plane > 256 || (plane & (plane - 1)) !== 0)
    return [`plane width ${plane} must be a power of two from 1 to 256`];
  if (!caps) return [];
  const max = Math.min(caps.limits.maxComputeInvocationsPerWorkgroup, caps.limits.maxComputeWorkgroupSizeX);
  if (plane > max) return [`plane width ${plane} > this adapter's ${max} invocations per workgroup`];
  if (arm === 'subgroup-matrix' && caps.subgroups && plane !== caps.subgroupMaxSize)
    return [
      `the subgroup-matrix arm runs on the hardware plane: plane width must be ${caps.subgroupMaxSize}, not ${plane}`,
    ];
  return [];
}

/**
 * Why `config.arm` cannot run for this family here: not one of its arms, or unavailable on the adapter.
 * @example armProblems(catalog, config, caps) // ['arm dp4a: this browser lacks ...']
 */
export function armProblems(
  family: Pick<FamilyCatalog, 'id' | 'arms'>,
  config: RunConfig,
  caps?: AdapterCaps,
): string[] {
  const decl = family.arms.find((a) => a.arm === config.arm);
  if (!decl)
    return [`${family.id} has no ${config.arm} arm (it has ${family.arms.map((a) => a.arm).join(', ')})`];
  const why = caps ? decl.unavailable(caps, config.params) : undefined;
  return why ? [`the ${decl.label} arm cannot run here: ${why}`] : [];
}

/**
 * The checks every family's validate() starts with: the arm (one of the family's, available here) and
 * the plane (the config's own, else the adapter's; unknown without an adapter).
 * @example armPlaneProblems(catalog, config, caps)
 */
export function armPlaneProblems(
  family: Pick<FamilyCatalog, 'id' | 'arms'>,
  config: RunConfig,
  caps?: AdapterCaps,
): string[] {
  const plane = config.plane ?? (caps ? planeWidth(caps) : undefined);
  return [
    ...armProblems(family, config, caps),
    ...(plane === undefined ? [] : planeProblems(plane, config.arm, caps)),
  ];
}

/**
 * The arm a family starts on here: the fastest it lists that this adapter can run (arms are listed
 * portable first, fastest last); the portable arm when no adapter is known.
 * @example defaultArm(catalog, caps, catalog.defaults) // 'dp4a' on SwiftShader
 */
export function defaultArm(
  family: Pick<FamilyCatalog, 'arms'>,
  caps: AdapterCaps | undefined,
  params: FamilyParams,
): Arm {
  const ok = family.arms.filter((a) => caps && !a.unavailable(caps, params));
  return (ok.at(-1) ?? family.arms[0])?.arm ?? 'scalar';
}

/**
 * The arms a search tries here: those this adapter runs at these params, the scalar arm only where
 * nothing faster runs (it is the portable reference, never the fastest where another runs).
 * @example fastArms(catalog, caps, base.params) // ['dp4a'] on SwiftShader, ['dp4a', 'subgroup-matrix'] on the H200
 */
export function fastArms(
  family: Pick<FamilyCatalog, 'arms'>,
  caps: AdapterCaps,
  params: FamilyParams,
): Arm[] {
  const runnable = family.arms.filter((a) => !a.unavailable(caps, params)).map((a) => a.arm);
  return runnable.length > 1 ? runnable.filter((a) => a !== 'scalar') : runnable;
}
