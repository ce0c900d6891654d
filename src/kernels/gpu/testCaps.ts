// Adapter descriptions for Node-tier validation tests: no GPU needed to check what a family accepts
// on an adapter that has (or lacks) subgroup matrices, f16, dot4I8Packed or a large workgroup.
import { SUBGROUP_MATRIX_FEATURE, type AdapterCaps, type SubgroupMatrixConfig } from './caps';

/** Overrides of fakeCaps: any field, and any subset of the limits (the rest keep fakeCaps' values). */
export type FakeCapsOverrides = Partial<Omit<AdapterCaps, 'limits'>> & {
  limits?: Partial<AdapterCaps['limits']>;
};

/**
 * A 32-wide-subgroup adapter with dot4I8Packed; subgroup-matrix configs (and the feature) when given.
 * @example fakeCaps({ shaderF16: true, limits: { maxComputeWorkgroupStorageSize: 32768 } }, [matrixConfig(16, 16, 16, 'f16', 'f32')])
 */
export function fakeCaps(over: FakeCapsOverrides = {}, configs: SubgroupMatrixConfig[] = []): AdapterCaps {
  const { limits, ...fields } = over;
  return {
    vendor: 'test',
    architecture: '',
    description: 'fake adapter',
    features: ['subgroups', ...(configs.length ? [SUBGROUP_MATRIX_FEATURE] : [])],
    subgroups: true,
    subgroupMinSize: 32,
    subgroupMaxSize: 32,
    dot4I8Packed: true,
    shaderF16: false,
    timestampQuery: false,
    subgroupMatrixConfigs: configs,
    limits: {
      maxComputeInvocationsPerWorkgroup: 1024,
      maxComputeWorkgroupStorageSize: 49152,
      maxComputeWorkgroupSizeX: 1024,
      maxComputeWorkgroupsPerDimension: 65535,
      maxStorageBufferBindingSize: 1 << 30,
      maxBufferSize: 1 << 30,
      maxStorageBuffersPerShaderStage: 10,
      ...limits,
    },
    ...fields,
  };
}

/** What Dawn on SwiftShader reports (FINDINGS.md): subgroups of 4, dot4I8Packed, no subgroup matrix. */
export const SWIFTSHADER_CAPS: AdapterCaps = fakeCaps({
  vendor: 'google',
  architecture: 'swiftshader',
  description: 'SwiftShader',
  features: ['subgroups', 'timestamp-query'],
  subgroupMinSize: 4,
  subgroupMaxSize: 4,
  timestampQuery: true,
  limits: {
    maxComputeInvocationsPerWorkgroup: 256,
    maxComputeWorkgroupStorageSize: 32768,
    maxComputeWorkgroupSizeX: 256,
    maxStorageBuffersPerShaderStage: 12,
  },
});

/** One subgroup-matrix config entry (adapter.info.subgroupMatrixConfigs). */
export function matrixConfig(
  M: number,
  N: number,
  K: number,
  componentType = 'i8',
  resultComponentType = 'i32',
): SubgroupMatrixConfig {
  return { componentType, resultComponentType, M, N, K };
}

/** The int8 configs the H200 lists under allow_unsafe_apis (FINDINGS.md). */
export const H200_INT8_CONFIGS: SubgroupMatrixConfig[] = [
  matrixConfig(16, 16, 32),
  matrixConfig(16, 8, 32),
  matrixConfig(16, 16, 32, 'u8', 'u32'),
  matrixConfig(16, 8, 32, 'u8', 'u32'),
];

/** The f16 configs the H200 adds with vulkan_enable_f16_on_nvidia (FINDINGS.md). */
export const H200_F16_CONFIGS: SubgroupMatrixConfig[] = [
  matrixConfig(16, 16, 16, 'f16', 'f16'),
  matrixConfig(16, 16, 16, 'f16', 'f32'),
  matrixConfig(16, 8, 16, 'f16', 'f16'),
  matrixConfig(16, 8, 16, 'f16', 'f32'),
  matrixConfig(16, 8, 8, 'f16', 'f16'),
  matrixConfig(16, 8, 8, 'f16', 'f32'),
];
