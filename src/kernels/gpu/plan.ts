// A kernel's host launch plan as plain data: which buffers, which passes, which grid. Families build
// plans; `runPlan` executes any plan on any GPUDevice (browser, worker, or Dawn in Node).

export type BindingKind = 'storage' | 'read-only-storage' | 'uniform';

export interface BufferSpec {
  name: string;
  kind: BindingKind;
  /** Initial contents; when absent the buffer is `size` zero bytes. */
  data?: ArrayBufferView;
  size?: number;
}

export interface PassSpec {
  label: string;
  wgsl: string;
  entryPoint: string;
  /** Workgroup counts (x, y, z). */
  workgroups: readonly [number, number, number];
  /** Buffer names in @group(0) @binding(i) order. */
  bindings: readonly string[];
  /** Workgroup size of the entry point (for display and checks). */
  workgroupSize: number;
}

export type ElementType = 'f32' | 'i32' | 'u32';

export interface KernelPlan {
  buffers: BufferSpec[];
  passes: PassSpec[];
  /** The buffer holding the result. */
  output: string;
  outputType: ElementType;
  /** Index of the pass that is timed and whose WGSL the editor shows. */
  mainPass: number;
}

/** Bytes of a buffer spec, rounded up to the 4-byte multiple WebGPU requires (uniforms to 16). */
export function bufferBytes(b: BufferSpec): number {
  const raw = b.data ? b.data.byteLength : (b.size ?? 0);
  const align = b.kind === 'uniform' ? 16 : 4;
  return Math.max(align, Math.ceil(raw / align) * align);
}

/** Throw a clear error before any dispatch when a plan's grid exceeds the adapter's limit. */
export function checkGrid(pass: PassSpec, maxPerDim: number): void {
  pass.workgroups.forEach((w, i) => {
    if (!Number.isInteger(w) || w < 1 || w > maxPerDim) {
      throw new RangeError(`${pass.label}: grid ${'xyz'[i]} = ${w} outside 1..${maxPerDim}`);
    }
  });
}

/** What a generated kernel tells a host about launching it (MmqKernel, CoopmatKernel, GemmF32Kernel...). */
export interface KernelLaunch {
  wgsl: string;
  entryPoint: string;
  /** Buffer names in @group(0) @binding(i) order. */
  bindings: readonly string[];
  workgroupSize: number;
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
