// Test fixture: the capabilities Chromium's SwiftShader adapter reports (plane 4, dp4a, no subgroup matrix,
// 10 storage buffers per stage), so store and controller tests see the CI adapter without a GPU. It is
// Dawn-in-Node's SwiftShader caps with Chromium's two differences.
import type { AdapterCaps } from '../../kernels/gpu/caps';
import { SWIFTSHADER_CAPS as DAWN_SWIFTSHADER_CAPS } from '../../kernels/gpu/testCaps';

/** An adapter like Chromium's SwiftShader: plane 4, dp4a, no subgroup matrix, 10 storage buffers. */
export const SWIFTSHADER_CAPS: AdapterCaps = {
  ...DAWN_SWIFTSHADER_CAPS,
  description: '',
  limits: { ...DAWN_SWIFTSHADER_CAPS.limits, maxStorageBuffersPerShaderStage: 10 },
};
