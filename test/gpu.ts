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
 * Open the shared test device with one more Dawn toggle, restoring DAWN_FLAGS afterwards so the other
 * test files of this process (each gets its own device) keep the default configuration.
 * @example const gpu = await withDawnFeature('disable_workgroup_init', getTestGpu);
 */
export async function withDawnFeature<T>(feature: string, open: () => Promise<T>): Promise<T> {
  const saved = process.env.DAWN_FLAGS;
  const flags = (saved ?? '').split(' ').filter(Boolean);
  const at = flags.findIndex((f) => f.startsWith('enable-dawn-features='));
  if (at >= 0) flags[at] += `,${feature}`;
  else flags.push(`enable-dawn-features=${feature}`);
  process.env.DAWN_FLAGS = flags.join(' ');
  try {
    return await open();
  } finally {
    if (saved === undefined) delete process.env.DAWN_FLAGS;
    else process.env.DAWN_FLAGS = saved;
  }
}

/**
 * The shared device without Dawn's workgroup zero-fill. Dawn zero-fills workgroup memory for every kernel
 * unless told not to; on SwiftShader that polyfill costs ~1.4 s of compile per kernel with a shared f32
 * tile (8x the kernel itself; a quick bench run went from 23 s to 2.6 s of CPU without it). WebGPU promises
 * the zero-fill and browsers keep it, so a kernel here can only be held to more: our kernels write every
 * workgroup word before reading it, and one that read an unwritten word would now get garbage and fail.
 * The first opener of a file's device decides; open it this way before anything else in the file does.
 * @example const { device, caps } = await getFastTestGpu();
 */
export function getFastTestGpu(): Promise<TestGpu> {
  return withDawnFeature('disable_workgroup_init', getTestGpu);
}

/**
 * Open the shared device before the calling file's tests (in a beforeAll); the getter hands it to them.
 * @example const gpu = useTestGpu(); it('runs', async () => { const { device, caps } = gpu(); });
 */
export function useTestGpu(open: () => Promise<TestGpu> = getTestGpu): () => TestGpu {
  let gpu: TestGpu | undefined;
  beforeAll(async () => {
    gpu = await open();
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
