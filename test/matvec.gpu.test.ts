// The decode matvec on a real WebGPU implementation (Dawn on SwiftShader in CI) against the MMQ Q4_K
// oracle, bit for bit: one dispatch, the plane's lanes splitting K, each block's term summed in K order.
// Its shapes cross every chunking case (a partial last chunk, rows past one lane's sums, column tails),
// the instrumented run records the analytic ownership, and a reordered sum fails the bit-exact check.
import { describe, expect, it } from 'vitest';
import { judge } from '../src/kernels/compare';
import { resolveConfig } from '../src/kernels/arms';
import { ownershipDiff } from '../src/kernels/gpu/instrument';
import { KERNELS } from '../src/kernels';
import type { RunConfig } from '../src/kernels/family';
import { buildMatvecKernel, matvecQ4kFamily } from '../src/kernels/matvec';
import { BIT, openKernelHarness } from './kernelHarness';

const { caps, planeFor, runOut, check, recordOwnership } = await openKernelHarness('matvec gpu');

/** The matvec's arms: both run on any adapter with dp4a (SwiftShader too), so neither may skip. */
const perArm = (name: string, fn: (arm: 'scalar' | 'dp4a') => Promise<void>) => {
  for (const arm of ['scalar', 'dp4a'] as const) it(`${name} [${arm}]`, () => fn(arm));
};

const config = (arm: RunConfig['arm'], params: Record<string, number>): RunConfig => ({
  kernel: 'matvec-q4k',
  arm,
  plane: planeFor(arm),
  data: { source: 'reference', seed: 0 },
  params: { ...matvecQ4kFamily.defaults, ...params },
});

const built = (arm: RunConfig['arm'], params: Record<string, number>) =>
  matvecQ4kFamily.build(resolveConfig(config(arm, params), caps), caps);

describe('matvec-q4k (decode, one dispatch)', () => {
  perArm('is bit-exact to the MMQ Q4_K oracle on every chunking case', async (arm) => {
    for (const params of [
      { m: 1, n: 64, k: 256, planes: 1, cols: 1 },
      { m: 1, n: 70, k: 1024, planes: 4, cols: 1 }, // n tail, chunks of 4 or 32 units
      { m: 8, n: 50, k: 1024, planes: 2, cols: 2 },
      { m: 3, n: 70, k: 2560, planes: 4, cols: 4 }, // 40 units: a partial last chunk
      { m: 16, n: 33, k: 512, planes: 8, cols: 2 }, // more (row, column) sums than lanes
      ...matvecQ4kFamily.checks!.map((c) => c.params as Record<string, number>),
    ]) {
      const b = built(arm, params);
      const got = await runOut(b.plan);
      check(got, b.facts.oracle() as Float32Array, BIT, `matvec ${JSON.stringify(params)} ${arm}`);
    }
  });

  perArm('records the analytic ownership: each output once, by its (row, column) lane', async (arm) => {
    const b = built(arm, { m: 5, n: 40, k: 512, planes: 2, cols: 2 });
    const { own, output } = await recordOwnership(b);
    expect(ownershipDiff(own, b.facts.analyticOwnership('scalar-epilogue'))).toBe(0);
    check(output, b.facts.oracle() as Float32Array, BIT, `matvec instrumented ${arm}`);
  });

  it('a sum in another order fails the bit-exact gate (the terms added last to first)', async () => {
    const arm = 'scalar';
    const b = built(arm, { m: 2, n: 64, k: 2048, planes: 2, cols: 1 });
    const main = b.plan.passes[0]!.wgsl;
    const reversed = main.replace(
      'acc[a] = acc[a] + v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];',
      'acc[a] = acc[a] + v[7] + v[6] + v[5] + v[4] + v[3] + v[2] + v[1] + v[0];',
    );
    expect(reversed).not.toBe(main);
    const got = await runOut(b.plan, { 0: reversed });
    expect(judge(got, b.facts.oracle() as Float32Array, BIT).pass).toBe(false);
  });

  it('is one dispatch of one workgroup per planes x cols columns, its sums in workgroup memory', () => {
    const k = buildMatvecKernel({ m: 8, n: 4096, k: 4096, planes: 4, cols: 1, plane: 32, arm: 'dp4a' });
    expect(k.workgroups).toEqual([1024, 1, 1]);
    expect(k.workgroupSize).toBe(128);
    expect(k.workgroupBytes).toBe(2 * 4 * 1 * 8 * 64 * 4);
    expect(
      KERNELS.get('matvec-q4k').build(resolveConfig(config('scalar', { m: 1 }), caps), caps).plan.passes,
    ).toHaveLength(1);
  });
});
