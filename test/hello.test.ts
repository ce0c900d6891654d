// Hello kernels on a real WebGPU device (Dawn; SwiftShader in CI): every runnable arm bit-exact vs the
// oracle, ownership recorded by the instrumented kernel == the analytic map, and a broken kernel fails.
import { describe, expect, it } from 'vitest';
import { judge } from '../src/kernels/compare';
import { ShapeError, type DataChoice, type ResolvedConfig } from '../src/kernels/family';
import { planeWidth, type Arm } from '../src/kernels/gpu/caps';
import { decodeOwnership } from '../src/kernels/gpu/instrument';
import { runPlan } from '../src/kernels/gpu/runner';
import { helloMmaFamily, helloWgsl, helloWmmaFamily, helloParams } from '../src/kernels/hello';
import { getTestGpu, withValidation } from './gpu';
import { skipBecause } from './skip';

const families = [helloWmmaFamily, helloMmaFamily];

function config(
  family: typeof helloWmmaFamily,
  arm: Arm,
  plane: number,
  data: DataChoice = { source: 'reference', seed: 0 },
): ResolvedConfig {
  return { kernel: family.id, arm, plane, data, params: {} };
}

describe('hello kernels on the GPU', async () => {
  const { device, caps } = await getTestGpu();
  const hw = planeWidth(caps);

  for (const family of families) {
    for (const arm of ['scalar', 'dp4a'] as const) {
      // The hardware plane, plus logical planes narrower and wider than it (the partition must follow it).
      for (const plane of [...new Set([hw, 1, 16, 64])]) {
        it(`${family.id} ${arm} plane ${plane}: bit-exact vs the oracle, reference and random data`, async () => {
          for (const source of ['reference', 'random'] as const) {
            const prep = family.build(config(family, arm, plane, { source, seed: 3 }), caps);
            const r = await withValidation(device, () => runPlan(device, prep.plan));
            const v = judge(new Int32Array(r.output), prep.facts.oracle(), prep.facts.gate);
            expect(v, `${source}: first bad ${v.firstBad.join(',')}`).toMatchObject({
              pass: true,
              mismatches: 0,
            });
          }
        });
      }
    }

    it(`${family.id}: instrumented ownership == analytic, every output stored exactly once`, async () => {
      for (const arm of ['scalar', 'dp4a'] as const) {
        const prep = family.build(config(family, arm, hw), caps);
        const r = await runPlan(device, prep.instrumentedPlan(), { read: [prep.ownerBuffer] });
        const got = decodeOwnership(r.reads[prep.ownerBuffer]!, prep.facts.rows, prep.facts.cols);
        const want = prep.facts.analyticOwnership('scalar-epilogue');
        expect([...got.count]).toEqual([...want.count]);
        expect([...got.lane]).toEqual([...want.lane]);
        expect([...got.plane]).toEqual([...want.plane]);
        expect([...got.workgroup]).toEqual([...want.workgroup]);
        // The instrumented kernel still computes the right thing.
        expect(judge(new Int32Array(r.output), prep.facts.oracle(), prep.facts.gate).pass).toBe(true);
      }
    });

    it(`${family.id}: a deliberately broken kernel (last K step dropped) fails the bit-exact gate`, async () => {
      const prep = family.build(config(family, 'scalar', hw), caps);
      const code = prep.plan.passes[0]!.wgsl;
      const broken = code.replace('for (var l = 0u; l < K; l++)', 'for (var l = 0u; l < K - 1u; l++)');
      expect(broken).not.toBe(code);
      const r = await runPlan(device, prep.plan, { wgslOverride: { 0: broken } });
      const v = judge(new Int32Array(r.output), prep.facts.oracle(), prep.facts.gate);
      expect(v.pass).toBe(false);
      expect(v.mismatches).toBeGreaterThan(prep.facts.rows * prep.facts.cols * 0.9);
    });

    it(`${family.id}: a kernel that skips a lane's outputs leaves them unwritten and fails ownership`, async () => {
      const prep = family.build(config(family, 'scalar', hw), caps);
      const code = prep.instrumentedPlan().passes[0]!.wgsl;
      // The "hardcoded 32" bug in miniature: the last lane of the plane never stores.
      const broken = code.replace(
        'set_owner(0u, 0u, lane);',
        'set_owner(0u, 0u, lane);\n  if (lane == PLANE - 1u) { return; }',
      );
      const r = await runPlan(device, prep.instrumentedPlan(), {
        wgslOverride: { 0: broken },
        read: [prep.ownerBuffer],
      });
      const { rows, cols } = prep.facts;
      const got = decodeOwnership(r.reads[prep.ownerBuffer]!, rows, cols);
      const unwritten = [...got.count].filter((c) => c === 0).length;
      expect(unwritten).toBe((rows * cols) / hw);
      expect(judge(new Int32Array(r.output), prep.facts.oracle(), prep.facts.gate).pass).toBe(false);
    });

    it(`${family.id}: bad planes and data seeds throw ShapeError before any dispatch`, () => {
      expect(() => family.build(config(family, 'scalar', 3), caps)).toThrow(ShapeError);
      expect(() => family.build(config(family, 'scalar', 3), caps)).toThrow(
        /plane width 3 must be a power of two/,
      );
      expect(() => family.build(config(family, 'scalar', hw, { source: 'random', seed: -1 }), caps)).toThrow(
        /data seed -1/,
      );
      expect(family.validate(config(family, 'scalar', hw), caps)).toEqual([]);
    });

    it(`${family.id} subgroup-matrix arm: runs where the adapter has the i8 config, else is refused with the reason`, async (ctx) => {
      const cfg = config(family, 'subgroup-matrix', hw);
      const errs = family.validate(cfg, caps);
      if (errs.length) {
        expect(errs.join(' ')).toMatch(
          /subgroup matrix \(int8\) arm cannot run here: this adapter (has no subgroup matrices|lists no i8 -> i32)/,
        );
        expect(() => family.build(cfg, caps)).toThrow(ShapeError);
        // The WGSL is still generated (and snapshot-tested in src/kernels/hello/hello.test.ts).
        expect(helloWgsl(helloParams(cfg, caps))).toContain('enable chromium_experimental_subgroup_matrix;');
        await skipBecause(ctx, 'no-subgroup-matrix', errs.join('; '), { matrixComponent: 'i8' });
      }
      const prep = family.build(cfg, caps);
      const r = await withValidation(device, () => runPlan(device, prep.plan));
      expect(judge(new Int32Array(r.output), prep.facts.oracle(), prep.facts.gate)).toMatchObject({
        pass: true,
      });
    });
  }
});
