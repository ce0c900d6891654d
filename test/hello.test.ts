// Hello kernels on a real WebGPU device (Dawn; SwiftShader in CI): every runnable arm bit-exact vs the
// oracle, ownership recorded by the instrumented kernel == the analytic map, and a broken kernel fails.
import { describe, expect, it } from 'vitest';
import { judge } from '../src/kernels/compare';
import { ShapeError, type ProblemConfig } from '../src/kernels/family';
import { planeWidth, type Arm } from '../src/kernels/gpu/caps';
import { decodeOwnership } from '../src/kernels/gpu/instrument';
import { runPlan } from '../src/kernels/gpu/run';
import { helloMmaFamily, helloWgsl, helloWmmaFamily, helloParams } from '../src/kernels/hello';
import { getTestGpu, withValidation } from './gpu';

const families = [helloWmmaFamily, helloMmaFamily];

function config(
  family: typeof helloWmmaFamily,
  arm: Arm,
  plane: number,
  extra: Partial<ProblemConfig> = {},
): ProblemConfig {
  return { kernel: family.id, arm, plane, ...family.defaults, ...extra };
}

describe('hello kernels on the GPU', async () => {
  const { device, caps } = await getTestGpu();
  const hw = planeWidth(caps);

  for (const family of families) {
    for (const arm of ['scalar', 'dp4a'] as const) {
      // The hardware plane, plus logical planes narrower and wider than it (the partition must follow it).
      for (const plane of [...new Set([hw, 1, 16, 64])]) {
        it(`${family.id} ${arm} plane ${plane}: bit-exact vs the oracle, seed and random data`, async () => {
          for (const dataSource of ['seed', 'random'] as const) {
            const prep = family.prepare(config(family, arm, plane, { dataSource, dataSeed: 3 }), caps);
            const r = await withValidation(device, () => runPlan(device, prep.plan));
            const v = judge(new Int32Array(r.output), prep.oracle(), prep.gate);
            expect(v, `${dataSource}: first bad ${v.firstBad.join(',')}`).toMatchObject({
              pass: true,
              mismatches: 0,
            });
          }
        });
      }
    }

    it(`${family.id}: instrumented ownership == analytic, every output stored exactly once`, async () => {
      for (const arm of ['scalar', 'dp4a'] as const) {
        const prep = family.prepare(config(family, arm, hw), caps);
        const r = await runPlan(device, prep.instrumentedPlan, { read: [prep.ownerBuffer] });
        const got = decodeOwnership(r.reads[prep.ownerBuffer]!, prep.rows, prep.cols);
        const want = prep.analyticOwnership('scalar-epilogue');
        expect([...got.count]).toEqual([...want.count]);
        expect([...got.lane]).toEqual([...want.lane]);
        expect([...got.plane]).toEqual([...want.plane]);
        expect([...got.workgroup]).toEqual([...want.workgroup]);
        // The instrumented kernel still computes the right thing.
        expect(judge(new Int32Array(r.output), prep.oracle(), prep.gate).pass).toBe(true);
      }
    });

    it(`${family.id}: a deliberately broken kernel (last K step dropped) fails the bit-exact gate`, async () => {
      const prep = family.prepare(config(family, 'scalar', hw), caps);
      const code = prep.plan.passes[0]!.wgsl;
      const broken = code.replace('for (var l = 0u; l < K; l++)', 'for (var l = 0u; l < K - 1u; l++)');
      expect(broken).not.toBe(code);
      const r = await runPlan(device, prep.plan, { wgslOverride: { 0: broken } });
      const v = judge(new Int32Array(r.output), prep.oracle(), prep.gate);
      expect(v.pass).toBe(false);
      expect(v.mismatches).toBeGreaterThan(prep.rows * prep.cols * 0.9);
    });

    it(`${family.id}: a kernel that skips a lane's outputs leaves them unwritten and fails ownership`, async () => {
      const prep = family.prepare(config(family, 'scalar', hw), caps);
      const code = prep.instrumentedPlan.passes[0]!.wgsl;
      // The "hardcoded 32" bug in miniature: the last lane of the plane never stores.
      const broken = code.replace(
        'set_owner(0u, 0u, lane);',
        'set_owner(0u, 0u, lane);\n  if (lane == PLANE - 1u) { return; }',
      );
      const r = await runPlan(device, prep.instrumentedPlan, {
        wgslOverride: { 0: broken },
        read: [prep.ownerBuffer],
      });
      const got = decodeOwnership(r.reads[prep.ownerBuffer]!, prep.rows, prep.cols);
      const unwritten = [...got.count].filter((c) => c === 0).length;
      expect(unwritten).toBe((prep.rows * prep.cols) / hw);
      expect(judge(new Int32Array(r.output), prep.oracle(), prep.gate).pass).toBe(false);
    });

    it(`${family.id}: bad shapes and planes throw ShapeError before any dispatch`, () => {
      expect(() => family.prepare(config(family, 'scalar', hw, { m: 32 }), caps)).toThrow(ShapeError);
      expect(() => family.prepare(config(family, 'scalar', hw, { k: 64 }), caps)).toThrow(
        /fixed 16x\d+x\d+ tile/,
      );
      expect(() => family.prepare(config(family, 'scalar', 3), caps)).toThrow(
        /plane 3 must be a power of two/,
      );
      expect(() => family.prepare(config(family, 'scalar', hw, { dataSeed: -1 }), caps)).toThrow(
        /dataSeed -1/,
      );
      expect(family.validate(config(family, 'scalar', hw), caps)).toEqual([]);
    });

    it(`${family.id} subgroup-matrix arm: runs where the adapter has the i8 config, else is refused with the reason`, async (ctx) => {
      const cfg = config(family, 'subgroup-matrix', hw);
      const errs = family.validate(cfg, caps);
      if (errs.length) {
        expect(errs.join(' ')).toMatch(
          /subgroup-matrix arm unavailable: (adapter does not expose chromium-experimental-subgroup-matrix|no i8->i32)/,
        );
        expect(() => family.prepare(cfg, caps)).toThrow(ShapeError);
        // The WGSL is still generated (and snapshot-tested in src/kernels/hello/hello.test.ts).
        expect(helloWgsl(helloParams(cfg, caps))).toContain('enable chromium_experimental_subgroup_matrix;');
        ctx.skip(
          `${caps.description || 'this adapter'} has no i8 subgroup-matrix config: ${errs.join('; ')}`,
        );
        return;
      }
      const prep = family.prepare(cfg, caps);
      const r = await withValidation(device, () => runPlan(device, prep.plan));
      expect(judge(new Int32Array(r.output), prep.oracle(), prep.gate)).toMatchObject({ pass: true });
    });
  }
});
