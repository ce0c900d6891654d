// Open a Dawn (webgpu npm) device for the bench and the probe: the same path the tests take, but with the
// adapter's full limits and every feature an arm can use, and with Dawn toggles from the command line
// (the H200 needs `allow_unsafe_apis` for subgroup matrices and `vulkan_enable_f16_on_nvidia` for f16).
import { existsSync } from 'node:fs';
import { create, globals } from 'webgpu';
import { readAdapterCaps, wantedFeatures, type AdapterCaps } from '../src/kernels/gpu/caps';

/**
 * Dawn toggles that Chrome turns on by default and Dawn standalone (the `webgpu` npm package) does not:
 * Chromium's gpu/config/gpu_finch_features.cc declares kWebGPUEnableRangeAnalysisForRobustness and
 * kWebGPUUseSpirv14 FEATURE_ENABLED_BY_DEFAULT, and Dawn's Vulkan backend maps them to these toggles.
 * The range analysis lets the bounds checks drop index clamps it can prove unnecessary; the checks
 * themselves stay on, as in a browser (why: docs/decisions/0007-browser-bounds-checks.md).
 * `--dawn-standalone` drops them.
 */
export const BROWSER_DEFAULT_TOGGLES = [
  'enable_integer_range_analysis_in_robustness',
  'use_spirv_1_4',
] as const;

/** The Dawn toggles that expose every accelerated arm on NVIDIA/Vulkan (int8 and f16 subgroup matrices, f16). */
export const UNSAFE_ARM_TOGGLES = ['allow_unsafe_apis', 'vulkan_enable_f16_on_nvidia'] as const;

/** Dawn flags for the bench and the probe: every accelerated arm, with the browser's default toggles. */
export const FULL_DAWN_FLAGS = [
  `enable-dawn-features=${[...UNSAFE_ARM_TOGGLES, ...BROWSER_DEFAULT_TOGGLES].join(',')}`,
] as const;

/** FULL_DAWN_FLAGS without the browser defaults (Dawn standalone), plus `extra` toggles if given. */
export function dawnFlags(opts: { standalone?: boolean; extra?: string } = {}): string[] {
  const toggles: string[] = [...UNSAFE_ARM_TOGGLES, ...(opts.standalone ? [] : BROWSER_DEFAULT_TOGGLES)];
  // `extra`: more toggles to enable, or to disable when written with a leading '-'.
  const extra = (opts.extra ?? '').split(',').filter(Boolean);
  toggles.push(...extra.filter((t) => !t.startsWith('-')));
  const off = extra.filter((t) => t.startsWith('-')).map((t) => t.slice(1));
  return [
    `enable-dawn-features=${toggles.join(',')}`,
    ...(off.length ? [`disable-dawn-features=${off.join(',')}`] : []),
  ];
}

export interface BenchGpu {
  /** The Dawn GPU object. Hold it as long as the device: once it is garbage-collected, Dawn tears the
   * instance down under the live device and the process crashes (seen as segfaults and futex aborts). */
  gpu: GPU;
  device: GPUDevice;
  adapter: GPUAdapter;
  caps: AdapterCaps;
  /** The Dawn flags the GPU object was created with. */
  flags: readonly string[];
}

/** Plain-data view of `adapter.info` (Dawn's object does not survive JSON.stringify field by field). */
export function adapterInfoRecord(adapter: GPUAdapter): Record<string, unknown> {
  const info = adapter.info as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of [
    'vendor',
    'architecture',
    'device',
    'description',
    'subgroupMinSize',
    'subgroupMaxSize',
    'isFallbackAdapter',
    'subgroupMatrixConfigs',
  ]) {
    const v = info[key];
    if (v === undefined) continue;
    // Dawn's config objects keep their fields on the prototype: copy them by name.
    out[key] = Array.isArray(v)
      ? v.map((c: Record<string, unknown>) => ({
          componentType: c.componentType,
          resultComponentType: c.resultComponentType,
          M: c.M,
          N: c.N,
          K: c.K,
        }))
      : v;
  }
  return out;
}

// Every GPU object this process created, kept reachable for the process lifetime (see BenchGpu.gpu).
const live: GPU[] = [];

/**
 * Create the GPU object with `flags`, take the high-performance adapter and a device with the adapter's
 * limits and all arm features. Throws with a clear message when there is no adapter.
 * @example const { device, caps } = await openBenchGpu([...FULL_DAWN_FLAGS]);
 */
export async function openBenchGpu(flags: readonly string[]): Promise<BenchGpu> {
  Object.assign(globalThis, globals);
  const gpu = create([...flags]);
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) {
    throw new Error(
      `no WebGPU adapter (Dawn flags ${JSON.stringify(flags)}; VK_ICD_FILENAMES=${process.env.VK_ICD_FILENAMES ?? ''} VK_DRIVER_FILES=${process.env.VK_DRIVER_FILES ?? ''})`,
    );
  }
  const caps = readAdapterCaps(adapter, gpu.wgslLanguageFeatures);
  const L = caps.limits;
  const device = await adapter.requestDevice({
    requiredFeatures: wantedFeatures(caps),
    requiredLimits: {
      maxComputeWorkgroupStorageSize: L.maxComputeWorkgroupStorageSize,
      maxComputeInvocationsPerWorkgroup: L.maxComputeInvocationsPerWorkgroup,
      maxComputeWorkgroupSizeX: L.maxComputeWorkgroupSizeX,
      maxStorageBufferBindingSize: L.maxStorageBufferBindingSize,
      maxBufferSize: L.maxBufferSize,
      maxStorageBuffersPerShaderStage: L.maxStorageBuffersPerShaderStage,
    },
  });
  device.addEventListener('uncapturederror', (e) => {
    console.error(`[webgpu] uncaptured error: ${(e as GPUUncapturedErrorEvent).error.message}`);
  });
  live.push(gpu);
  return { gpu, device, adapter, caps, flags };
}

/** Chromium's SwiftShader Vulkan ICD (Debian's chromium package): WebGPU on the CPU. */
export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

/**
 * `open()` on whatever adapter Vulkan finds; where that fails and no Vulkan driver is named, once more on
 * SwiftShader (when installed), after `note` says so. The CLI's `run` and the hardware tier open this way.
 * @example const gpu = await orSwiftShader(() => openBenchGpu(flags), (icd) => console.log(`on ${icd}`));
 */
export async function orSwiftShader<T>(open: () => Promise<T>, note: (icd: string) => void): Promise<T> {
  try {
    return await open();
  } catch (e) {
    if (process.env.VK_ICD_FILENAMES || process.env.VK_DRIVER_FILES || !existsSync(SWIFTSHADER_ICD)) throw e;
    note(SWIFTSHADER_ICD);
    process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
    return open();
  }
}
