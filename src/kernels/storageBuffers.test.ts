// Every kernel family must fit WebGPU's default maxStorageBuffersPerShaderStage of 8 -- what Chromium's
// SwiftShader adapter and many real adapters report -- INCLUDING the owner debug buffer an instrumented
// run adds. The int8 MMQ kernels meet it by interleaving values read together (xs|xsum, d|dmin,
// counts|rows); this pins that for the validation path and for the plans the families actually build.
import { describe, expect, it } from 'vitest';
import type { KernelFamily, ResolvedConfig } from './family';
import { planeWidth, type AdapterCaps, type Arm } from './gpu/caps';
import { planLimitProblems, type KernelPlan } from './gpu/plan';
import { fakeCaps, H200_F16_CONFIGS, H200_INT8_CONFIGS, SWIFTSHADER_CAPS } from './gpu/testCaps';
import { KERNELS } from './index';
import { moeFamily } from './moe';

const WEBGPU_DEFAULT_STORAGE_BUFFERS = 8;

const limitTo = (caps: AdapterCaps, max: number): AdapterCaps => ({
  ...caps,
  limits: { ...caps.limits, maxStorageBuffersPerShaderStage: max },
});

/** SwiftShader (no subgroup matrix) and an adapter with every arm, both capped at the WebGPU default. */
const ADAPTERS: { name: string; caps: AdapterCaps; arms: readonly Arm[] }[] = [
  {
    name: 'SwiftShader',
    caps: limitTo(SWIFTSHADER_CAPS, WEBGPU_DEFAULT_STORAGE_BUFFERS),
    arms: ['scalar', 'dp4a'],
  },
  {
    name: 'subgroup-matrix adapter',
    caps: limitTo(
      fakeCaps({ shaderF16: true }, [...H200_INT8_CONFIGS, ...H200_F16_CONFIGS]),
      WEBGPU_DEFAULT_STORAGE_BUFFERS,
    ),
    arms: ['scalar', 'dp4a', 'subgroup-matrix'],
  },
];

function defaultConfig(f: KernelFamily, arm: Arm, caps: AdapterCaps): ResolvedConfig {
  return {
    kernel: f.id,
    arm,
    plane: planeWidth(caps),
    data: { source: 'reference', seed: 0 },
    params: f.defaults,
  };
}

/** The most storage buffers any pass of `plan` binds. */
function maxStorageBindings(plan: KernelPlan): number {
  const kind = new Map(plan.buffers.map((b) => [b.name, b.kind]));
  return Math.max(
    ...plan.passes.map(
      (p) =>
        p.bindings.filter((name) => {
          const k = kind.get(name);
          return k === 'storage' || k === 'read-only-storage';
        }).length,
    ),
  );
}

describe(`storage buffers per shader stage <= ${WEBGPU_DEFAULT_STORAGE_BUFFERS} (instrumented)`, () => {
  for (const { name, caps, arms } of ADAPTERS) {
    for (const f of KERNELS.families) {
      for (const arm of f.arms.map((a) => a.arm).filter((a) => arms.includes(a))) {
        it(`${f.id} ${arm} on ${name}: validate() passes and the instrumented plan fits`, () => {
          const c = defaultConfig(f, arm, caps);
          expect(f.validate(c, caps)).toEqual([]);
          const b = f.build(c, caps);
          const inst = b.instrumentedPlan();
          expect(maxStorageBindings(inst)).toBeLessThanOrEqual(WEBGPU_DEFAULT_STORAGE_BUFFERS);
          expect(planLimitProblems(inst, caps.limits)).toEqual([]);
          // The owner buffer is really bound (the count above is of the instrumented pass).
          expect(inst.passes.some((q) => q.bindings.includes(b.ownerBuffer))).toBe(true);
        });
      }
    }
  }

  it('MoE binds exactly 8 with the owner buffer, so a limit of 7 is reported from the plan before any dispatch', () => {
    const caps = limitTo(SWIFTSHADER_CAPS, 7);
    const inst = moeFamily.build(defaultConfig(moeFamily, 'dp4a', caps), caps).instrumentedPlan();
    expect(planLimitProblems(inst, caps.limits)).toEqual([
      "moe-q4k-id (instrumented): binds 8 storage buffers > this adapter's 7 (maxStorageBuffersPerShaderStage)",
    ]);
  });
});
