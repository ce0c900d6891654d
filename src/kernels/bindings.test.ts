// Every pass of every family declares exactly the bindings it lists for the host, numbered 0, 1, ... in
// that order: what generating both sides from one binding table (gpu/bindings.ts) guarantees.
import { describe, expect, it } from 'vitest';
import type { KernelFamily } from './family';
import { planeWidth, type AdapterCaps } from './gpu/caps';
import type { KernelPlan } from './gpu/plan';
import { fakeCaps, H200_F16_CONFIGS, H200_INT8_CONFIGS, SWIFTSHADER_CAPS } from './gpu/testCaps';
import { KERNELS } from './index';
import { probeKernels } from './perf/probe';

const MATRIX_CAPS = fakeCaps({ shaderF16: true }, [...H200_INT8_CONFIGS, ...H200_F16_CONFIGS]);

/** Every value of every choice control, one at a time over the defaults (a config for each). */
function variants(f: KernelFamily): Record<string, string | number>[] {
  const out: Record<string, string | number>[] = [{ ...f.defaults, ...f.small }];
  for (const c of f.controls)
    if (c.kind === 'choice')
      for (const o of c.options) out.push({ ...f.defaults, ...f.small, [c.key]: o.value });
  // The MoE f16 route's stagings (its staging control shows on that route only).
  if (f.controls.some((c) => c.key === 'route'))
    for (const staging of ['prepass', 'fused-prepass', 'in-gemm', 'stream'])
      out.push({ ...f.defaults, ...f.small, route: 'f16', staging });
  return out;
}

/** Each @binding index a WGSL text declares, with its variable, in text order. */
const declared = (wgsl: string) =>
  [...wgsl.matchAll(/@group\(0\) @binding\((\d+)\) var<[^>]*> (\w+)/g)].map((m) => Number(m[1]));

function expectPlanBindings(plan: KernelPlan) {
  for (const pass of plan.passes)
    expect(declared(pass.wgsl), pass.label).toEqual(pass.bindings.map((_, i) => i));
}

describe('binding declarations match the host bind group', () => {
  for (const [name, caps] of [
    ['SwiftShader', SWIFTSHADER_CAPS],
    ['a subgroup-matrix adapter', MATRIX_CAPS],
  ] as [string, AdapterCaps][])
    for (const f of KERNELS.families)
      it(`${f.id} on ${name}: every arm and choice, instrumented and not`, () => {
        let built = 0;
        for (const params of variants(f))
          for (const { arm } of f.arms) {
            const config = {
              kernel: f.id,
              arm,
              plane: planeWidth(caps),
              data: { source: 'synthetic' as const, seed: 0 },
              params,
            };
            if (f.validate(config, caps).length) continue;
            const b = f.build(config, caps);
            expectPlanBindings(b.plan);
            expectPlanBindings(b.instrumentedPlan());
            built++;
          }
        expect(built).toBeGreaterThan(0);
      });

  it('the peak probes', () => {
    for (const k of probeKernels(MATRIX_CAPS).kernels) expectPlanBindings(k.plan(k.first));
  });
});
