// A kernel's host launch plan as plain data: which buffers, which passes, which grid. Families build
// plans; the runner (./runner.ts) prepares and executes any plan on any GPUDevice (browser, worker, or
// Dawn in Node). The adapter-limit checks live here, once, derived from the plan itself.
import type { AdapterLimits } from './caps';
import { GRID_SLICE_BINDING } from './gridSlice';

export type BindingKind = 'storage' | 'read-only-storage' | 'uniform';

export interface BufferSpec {
  name: string;
  kind: BindingKind;
  /**
   * Initial contents: a typed array, or a thunk that builds it when the plan is prepared (so a plan can
   * be generated and checked without building its data). Absent: `size` zero bytes.
   */
  data?: ArrayBufferView | (() => ArrayBufferView);
  /** Bytes; required when `data` is absent or a thunk. */
  size?: number;
  /** 'weight': timed runs rotate GPU-side copies of it (cold weight banks; see ResidentBuffers). */
  role?: 'weight';
}

export interface PassSpec {
  label: string;
  wgsl: string;
  entryPoint: string;
  /** Workgroup counts (x, y, z). */
  workgroups: readonly [number, number, number];
  /** Buffer names in @group(0) @binding(i) order. */
  bindings: readonly string[];
  /** Invocations per workgroup of the entry point. */
  workgroupSize: number;
  /** Workgroup memory the entry point declares, in bytes (0 when none). */
  workgroupBytes?: number;
}

export type ElementType = 'f32' | 'i32' | 'u32';

export interface KernelPlan {
  buffers: BufferSpec[];
  passes: PassSpec[];
  /** The buffer holding the result. */
  output: string;
  outputType: ElementType;
  /** Index of the pass whose WGSL the editor shows (the GEMM of a multi-pass plan). */
  mainPass: number;
}

/** The initial contents of a buffer spec (a thunk is called), or undefined for a zeroed buffer. */
export function bufferData(b: BufferSpec): ArrayBufferView | undefined {
  return typeof b.data === 'function' ? b.data() : b.data;
}

/** Bytes of a buffer spec, rounded up to the 4-byte multiple WebGPU requires (uniforms to 16). */
export function bufferBytes(b: BufferSpec): number {
  const raw = b.data && typeof b.data !== 'function' ? b.data.byteLength : b.size;
  if (raw === undefined) throw new RangeError(`buffer ${b.name} has lazy data but no size`);
  const align = b.kind === 'uniform' ? 16 : 4;
  return Math.max(align, Math.ceil(raw / align) * align);
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/**
 * Why a plan cannot launch on an adapter with these limits: grid sizes, workgroup size and memory,
 * storage bindings per pass, buffer sizes. One message per problem, in the adapter's terms. Empty = fine.
 * @example planLimitProblems(plan, caps.limits) // ['matrix GEMM: 65536 workgroups along y > 65535 ...']
 */
export function planLimitProblems(plan: KernelPlan, limits: AdapterLimits): string[] {
  const out: string[] = [];
  const maxWg = Math.min(limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX);
  const kinds = new Map(plan.buffers.map((b) => [b.name, b.kind]));
  for (const pass of plan.passes) {
    pass.workgroups.forEach((w, i) => {
      if (!Number.isInteger(w) || w < 1)
        out.push(`${pass.label}: the grid has ${w} workgroups along ${'xyz'[i]} (needs at least 1)`);
      else if (w > limits.maxComputeWorkgroupsPerDimension)
        out.push(
          `${pass.label}: ${w} workgroups along ${'xyz'[i]} > this adapter's ${limits.maxComputeWorkgroupsPerDimension} (maxComputeWorkgroupsPerDimension)`,
        );
    });
    if (pass.workgroupSize > maxWg)
      out.push(
        `${pass.label}: ${pass.workgroupSize} invocations per workgroup > this adapter's ${maxWg} (maxComputeInvocationsPerWorkgroup)`,
      );
    const bytes = pass.workgroupBytes ?? 0;
    if (bytes > limits.maxComputeWorkgroupStorageSize)
      out.push(
        `${pass.label}: ${bytes} bytes of workgroup memory > this adapter's ${limits.maxComputeWorkgroupStorageSize} (maxComputeWorkgroupStorageSize)`,
      );
    // The grid slice is the runner's uniform, not a plan buffer.
    const own = pass.bindings.filter((name) => name !== GRID_SLICE_BINDING);
    const storage = own.filter((name) => kinds.get(name) !== 'uniform').length;
    if (storage > limits.maxStorageBuffersPerShaderStage)
      out.push(
        `${pass.label}: binds ${plural(storage, 'storage buffer')} > this adapter's ${limits.maxStorageBuffersPerShaderStage} (maxStorageBuffersPerShaderStage)`,
      );
    for (const name of own)
      if (!kinds.has(name)) out.push(`${pass.label}: binds ${name}, which the plan does not have`);
  }
  for (const b of plan.buffers) {
    const bytes = bufferBytes(b);
    const max = b.kind === 'uniform' ? Infinity : limits.maxStorageBufferBindingSize;
    if (bytes > max)
      out.push(`buffer ${b.name} is ${bytes} bytes > this adapter's ${max} (maxStorageBufferBindingSize)`);
    else if (bytes > limits.maxBufferSize)
      out.push(`buffer ${b.name} is ${bytes} bytes > this adapter's ${limits.maxBufferSize} (maxBufferSize)`);
  }
  return out;
}

/** What a generated kernel tells a host about launching it (MmqKernel, CoopmatKernel, GemmF32Kernel...). */
export interface KernelLaunch {
  wgsl: string;
  entryPoint: string;
  /** Buffer names in @group(0) @binding(i) order. */
  bindings: readonly string[];
  workgroupSize: number;
  workgroupBytes?: number;
}

/**
 * The pass that dispatches `kern` over `workgroups`, its WGSL taken as it is (already compilable).
 * @example kernelPass(kc, kc.workgroups(m, n), 'coopmat-f16 scalar 2x2x1x1')
 */
export function kernelPass(
  kern: KernelLaunch,
  workgroups: readonly [number, number, number],
  label: string,
): PassSpec {
  return {
    label,
    wgsl: kern.wgsl,
    entryPoint: kern.entryPoint,
    workgroups,
    bindings: kern.bindings,
    workgroupSize: kern.workgroupSize,
    workgroupBytes: kern.workgroupBytes ?? 0,
  };
}

/**
 * The plan of one pass whose `out` buffer holds the result.
 * @example singlePassPlan(buffers, kernelPass(kc, kc.workgroups(m, n), 'coopmat-f16'))
 */
export function singlePassPlan(
  buffers: BufferSpec[],
  pass: PassSpec,
  outputType: ElementType = 'f32',
): KernelPlan {
  return { buffers, passes: [pass], output: 'out', outputType, mainPass: 0 };
}
