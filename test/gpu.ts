// Node + Dawn (webgpu npm package) on SwiftShader: a real WebGPU implementation without a GPU.
// One adapter/device per test process; every kernel test runs on it and checks its oracle.
import { beforeAll } from 'vitest';
import { create, globals } from 'webgpu';
import { readAdapterCaps, wantedFeatures, type AdapterCaps } from '../src/kernels/gpu/caps';

export interface TestGpu {
  device: GPUDevice;
  caps: AdapterCaps;
  /** What the adapter itself reports, read without the product's caps (test/skip.ts checks skips on it). */
  adapter: { features: ReadonlySet<string>; info: RawAdapterInfo };
}

/** adapter.info as Dawn fills it, the fields test/skip.ts reads (subgroup matrices are Chromium's own). */
export interface RawAdapterInfo {
  description?: string;
  subgroupMinSize?: number;
  subgroupMaxSize?: number;
  subgroupMatrixConfigs?: readonly { componentType: string; resultComponentType: string }[];
}

let pending: Promise<TestGpu> | undefined;

/** The shared Dawn device. Set VK_ICD_FILENAMES to a Vulkan ICD (SwiftShader in CI) before the first call. */
export function getTestGpu(): Promise<TestGpu> {
  if (!pending) pending = open();
  return pending;
}

/**
 * Open the shared device before the calling file's tests (in a beforeAll); the getter hands it to them.
 * @example const gpu = useTestGpu(); it('runs', async () => { const { device, caps } = gpu(); });
 */
export function useTestGpu(): () => TestGpu {
  let gpu: TestGpu | undefined;
  beforeAll(async () => {
    gpu = await getTestGpu();
  });
  return () => {
    if (!gpu) throw new Error('the test GPU opens in beforeAll: call the getter inside a test');
    return gpu;
  };
}

let dawn: GPU | undefined;

/** The process's Dawn WebGPU entry point (what `navigator.gpu` is in a browser), created once. */
export function getDawnGpu(): GPU {
  if (!dawn) {
    process.env.VK_ICD_FILENAMES ??= '/usr/lib/chromium/vk_swiftshader_icd.json';
    Object.assign(globalThis, globals);
    const flags = process.env.DAWN_FLAGS ? process.env.DAWN_FLAGS.split(' ') : [];
    dawn = create(flags);
  }
  return dawn;
}

async function open(): Promise<TestGpu> {
  const gpu = getDawnGpu();
  const adapter = await gpu.requestAdapter();
  if (!adapter) throw new Error('no WebGPU adapter (is VK_ICD_FILENAMES pointing at SwiftShader?)');
  const caps = readAdapterCaps(adapter, gpu.wgslLanguageFeatures);
  const device = await adapter.requestDevice({
    requiredFeatures: wantedFeatures(caps),
    requiredLimits: {
      maxComputeWorkgroupStorageSize: caps.limits.maxComputeWorkgroupStorageSize,
      maxComputeInvocationsPerWorkgroup: caps.limits.maxComputeInvocationsPerWorkgroup,
      maxComputeWorkgroupSizeX: caps.limits.maxComputeWorkgroupSizeX,
      maxStorageBufferBindingSize: caps.limits.maxStorageBufferBindingSize,
      maxBufferSize: caps.limits.maxBufferSize,
      maxStorageBuffersPerShaderStage: caps.limits.maxStorageBuffersPerShaderStage,
    },
  });
  device.addEventListener('uncapturederror', (e) => {
    throw new Error(`uncaptured WebGPU error: ${(e as GPUUncapturedErrorEvent).error.message}`);
  });
  const adapterInfo = { features: new Set(adapter.features), info: adapter.info as RawAdapterInfo };
  return { device, caps, adapter: adapterInfo };
}

/** Run `fn` inside a validation error scope and fail if WebGPU reported anything. */
export async function withValidation<T>(device: GPUDevice, fn: () => Promise<T>): Promise<T> {
  device.pushErrorScope('validation');
  const out = await fn();
  const err = await device.popErrorScope();
  if (err) throw new Error(`WebGPU validation error: ${err.message}`);
  return out;
}
