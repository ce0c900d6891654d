// Test fixture: the capabilities Chromium's SwiftShader adapter reports (plane 4, dp4a, no subgroup matrix,
// 10 storage buffers per stage), so store and controller tests see the CI adapter without a GPU.
import type { AdapterCaps } from '../../kernels/gpu/caps';

/** An adapter like SwiftShader: plane 4, dp4a, no subgroup matrix. */
export const SWIFTSHADER_CAPS: AdapterCaps = {
  vendor: 'google',
  architecture: 'swiftshader',
  description: '',
  features: ['subgroups', 'timestamp-query'],
  subgroups: true,
  subgroupMinSize: 4,
  subgroupMaxSize: 4,
  dot4I8Packed: true,
  shaderF16: false,
  timestampQuery: true,
  subgroupMatrixConfigs: [],
  limits: {
    maxComputeInvocationsPerWorkgroup: 256,
    maxComputeWorkgroupStorageSize: 32768,
    maxComputeWorkgroupSizeX: 256,
    maxComputeWorkgroupsPerDimension: 65535,
    maxStorageBufferBindingSize: 1 << 30,
    maxBufferSize: 1 << 30,
    maxStorageBuffersPerShaderStage: 10,
  },
};
