// What an adapter can do, read once from the real adapter and passed around as plain data, so kernel
// generators and the tuner stay pure. The arm of a kernel is chosen from this, never hard-coded.

export type Arm = 'scalar' | 'dp4a' | 'subgroup-matrix';
export const ARMS: readonly Arm[] = ['scalar', 'dp4a', 'subgroup-matrix'] as const;

export interface SubgroupMatrixConfig {
  componentType: string;
  resultComponentType: string;
  M: number;
  N: number;
  K: number;
}

export interface AdapterLimits {
  maxComputeInvocationsPerWorkgroup: number;
  maxComputeWorkgroupStorageSize: number;
  maxComputeWorkgroupSizeX: number;
  maxComputeWorkgroupsPerDimension: number;
  maxStorageBufferBindingSize: number;
  maxBufferSize: number;
  maxStorageBuffersPerShaderStage: number;
}

export interface AdapterCaps {
  vendor: string;
  architecture: string;
  description: string;
  features: string[];
  subgroups: boolean;
  subgroupMinSize: number;
  subgroupMaxSize: number;
  /** WGSL `packed_4x8_integer_dot_product` (dot4I8Packed). */
  dot4I8Packed: boolean;
  shaderF16: boolean;
  timestampQuery: boolean;
  /** From adapter.info.subgroupMatrixConfigs when `chromium-experimental-subgroup-matrix` is exposed. */
  subgroupMatrixConfigs: SubgroupMatrixConfig[];
  limits: AdapterLimits;
}

export const SUBGROUP_MATRIX_FEATURE = 'chromium-experimental-subgroup-matrix';

/**
 * Whether an adapter is a CPU implementation (SwiftShader, llvmpipe/lavapipe, WARP): no clocks to ramp
 * up, and every millisecond of untimed work is real CPU time.
 * @example isSoftwareAdapter({ ...caps, architecture: 'swiftshader' }) === true
 */
export function isSoftwareAdapter(
  caps: Pick<AdapterCaps, 'vendor' | 'architecture' | 'description'>,
): boolean {
  return /swiftshader|llvmpipe|lavapipe|microsoft basic render|\bwarp\b/i.test(
    `${caps.vendor} ${caps.architecture} ${caps.description}`,
  );
}

interface AdapterInfoLike {
  vendor?: string;
  architecture?: string;
  description?: string;
  subgroupMinSize?: number;
  subgroupMaxSize?: number;
  subgroupMatrixConfigs?: readonly SubgroupMatrixConfig[];
}

/**
 * Read an adapter's capabilities. `wgslLanguageFeatures` is `navigator.gpu.wgslLanguageFeatures` in a
 * browser or the Dawn GPU object's in Node; the caller passes it so this module never touches a global.
 * @example const caps = readAdapterCaps(adapter, gpu.wgslLanguageFeatures);
 */
export function readAdapterCaps(
  adapter: GPUAdapter,
  wgslLanguageFeatures?: ReadonlySet<string>,
): AdapterCaps {
  const info = (adapter.info ?? {}) as AdapterInfoLike;
  const features = [...adapter.features].map(String).sort();
  const has = (f: string) => adapter.features.has(f);
  const L = adapter.limits;
  const subgroups = has('subgroups');
  const cfgs = has(SUBGROUP_MATRIX_FEATURE) ? [...(info.subgroupMatrixConfigs ?? [])] : [];
  return {
    vendor: info.vendor ?? '',
    architecture: info.architecture ?? '',
    description: info.description ?? '',
    features,
    subgroups,
    subgroupMinSize: subgroups ? (info.subgroupMinSize ?? 32) : 0,
    subgroupMaxSize: subgroups ? (info.subgroupMaxSize ?? 32) : 0,
    dot4I8Packed: wgslLanguageFeatures ? wgslLanguageFeatures.has('packed_4x8_integer_dot_product') : false,
    shaderF16: has('shader-f16'),
    timestampQuery: has('timestamp-query'),
    subgroupMatrixConfigs: cfgs.map((c) => ({
      componentType: String(c.componentType),
      resultComponentType: String(c.resultComponentType),
      M: c.M,
      N: c.N,
      K: c.K,
    })),
    limits: {
      maxComputeInvocationsPerWorkgroup: L.maxComputeInvocationsPerWorkgroup,
      maxComputeWorkgroupStorageSize: L.maxComputeWorkgroupStorageSize,
      maxComputeWorkgroupSizeX: L.maxComputeWorkgroupSizeX,
      maxComputeWorkgroupsPerDimension: L.maxComputeWorkgroupsPerDimension,
      maxStorageBufferBindingSize: L.maxStorageBufferBindingSize,
      maxBufferSize: L.maxBufferSize,
      maxStorageBuffersPerShaderStage: L.maxStorageBuffersPerShaderStage,
    },
  };
}

/** Device features to request so every arm the adapter offers can be compiled. */
export function wantedFeatures(caps: AdapterCaps): GPUFeatureName[] {
  const want = ['subgroups', 'shader-f16', 'timestamp-query', SUBGROUP_MATRIX_FEATURE];
  return want.filter((f) => caps.features.includes(f)) as GPUFeatureName[];
}

/** Limits to request: the adapter's own, so the tuner's static checks and the device agree. */
export function wantedLimits(caps: AdapterCaps): Record<string, number> {
  return { ...caps.limits };
}

/**
 * The plane (subgroup) width of an adapter: every kernel partitions its tile by it. 4 on SwiftShader,
 * 32 on NVIDIA, 32 or 64 on AMD, 8..32 on Apple/Intel; without subgroups (Firefox, Safari) a logical
 * plane of 32, which the scalar arms accept like any divisor of 256.
 * @example planeWidth(caps) // 32 on the H200
 */
export function planeWidth(caps: AdapterCaps): number {
  return caps.subgroups && caps.subgroupMaxSize > 0 ? caps.subgroupMaxSize : 32;
}

/** The subgroup-matrix config of these types and shape, if the adapter lists it. */
export function findMatrixConfig(
  caps: AdapterCaps,
  component: string,
  result: string,
  M: number,
  N: number,
  K: number,
): SubgroupMatrixConfig | undefined {
  return caps.subgroupMatrixConfigs.find(
    (c) =>
      c.componentType === component &&
      c.resultComponentType === result &&
      c.M === M &&
      c.N === N &&
      c.K === K,
  );
}

/** A short stable device id for tuning caches: vendor/architecture/description + plane width. */
export function deviceId(caps: AdapterCaps): string {
  const name = [caps.vendor, caps.architecture, caps.description].filter(Boolean).join('/') || 'unknown';
  return `${name}#plane${planeWidth(caps)}`;
}
