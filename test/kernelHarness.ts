// What the int8 kernel GPU tests (mmq.gpu, moe.gpu) share: a device with Dawn's workgroup zero-init
// off, one test per arm, one run path, the oracle gate plus the bit-exact check, and recorded ownership.
import { afterAll, expect, it } from 'vitest';
import { judge, type Gate, type Verdict } from '../src/kernels/compare';
import type { BuiltProblem } from '../src/kernels/family';
import { MMQ_ARMS } from '../src/kernels/mmq';
import { planeWidth, type Arm } from '../src/kernels/gpu/caps';
import { decodeOwnership, type OwnershipMap } from '../src/kernels/gpu/instrument';
import type { KernelPlan } from '../src/kernels/gpu/plan';
import { runPlan } from '../src/kernels/gpu/runner';
import { getFastTestGpu, type TestGpu } from './gpu';
import { skipBecause } from './skip';

export const REL: Gate = { kind: 'rel-to-max', tol: 1e-6 };
export const BIT: Gate = { kind: 'bit-exact' };

/**
 * The seed's (m, n, k) cases for the tailed Q4_K kernels (mmq_q4k_wmma_rt, mmq_q4k_id at E=1): full
 * 32x64 tiles at both k, an m tail, an n tail, both, and a single row.
 */
export const SEED_TAIL_SHAPES: readonly (readonly [number, number, number])[] = [
  [32, 64, 256],
  [32, 64, 512],
  [17, 64, 256],
  [32, 50, 256],
  [17, 50, 512],
  [1, 64, 256],
];

export interface KernelHarness extends TestGpu {
  /** The plane each arm partitions by: the hardware width for the matrix arm, the adapter's otherwise. */
  planeFor(arm: Arm): number;
  /** Register a test per arm, named `name [arm]`; the matrix arm skips where the adapter has none. */
  perArm(name: string, fn: (arm: Arm) => Promise<void>): void;
  /** Run a plan (optionally with replaced pass WGSL) and return its f32 output. */
  runOut(plan: KernelPlan, wgslOverride?: Record<number, string>): Promise<Float32Array>;
  /** Assert the gate and bit-exactness against the oracle; return the gate's verdict. */
  check(got: Float32Array, want: Float32Array, gate: Gate, label: string): Verdict;
  /** Run the instrumented plan: assert every element stored exactly once; return the map and the output. */
  recordOwnership(p: BuiltProblem): Promise<{ own: OwnershipMap; output: Float32Array }>;
}

/**
 * The device and helpers of a kernel GPU test file; `tag` prefixes the bit-exactness summary logged
 * after the file's tests.
 * @example const { device, caps, perArm, check } = await openKernelHarness('mmq gpu');
 */
export async function openKernelHarness(tag: string): Promise<KernelHarness> {
  // Workgroup memory is not zero-filled on this device (getFastTestGpu says why).
  const gpu = await getFastTestGpu();
  const { device, caps } = gpu;
  // Beyond the seed's gates: WGSL's f32 + - * are correctly rounded and the kernels round every product
  // on its own (no_fuse blocks FMA contraction, which NVIDIA applies and SwiftShader does not), so each
  // arm reproduces the oracle's f32 order bit for bit on any adapter. A reordered epilogue could still
  // pass 1e-6; it cannot pass this.
  const bitStats = { exact: 0, runs: 0 };
  afterAll(() => {
    console.log(
      `[${tag}] bit-exact vs oracle in ${bitStats.exact}/${bitStats.runs} gated runs on ${caps.vendor}/${caps.architecture}`,
    );
  });
  const runOut = async (plan: KernelPlan, wgslOverride?: Record<number, string>) =>
    new Float32Array((await runPlan(device, plan, wgslOverride ? { wgslOverride } : {})).output);
  return {
    ...gpu,
    planeFor: (arm) => (arm === 'subgroup-matrix' ? caps.subgroupMaxSize : planeWidth(caps)),
    perArm(name, fn) {
      for (const { arm, unavailable } of MMQ_ARMS)
        it(`${name} [${arm}]`, async (ctx) => {
          // Only the matrix arm may skip, and only where the adapter itself has no int8 subgroup matrices:
          // any other arm the product calls unavailable here fails with its reason (test/skip.ts).
          const why = unavailable(caps, {});
          if (why && arm !== 'subgroup-matrix')
            throw new Error(`the ${arm} arm says it cannot run here: ${why}`);
          if (why) await skipBecause(ctx, 'no-subgroup-matrix', why, { matrixComponent: 'i8' });
          await fn(arm);
        });
    },
    runOut,
    check(got, want, gate, label) {
      const v = judge(got, want, gate);
      expect(
        v.pass,
        `${label}: rel_to_max ${v.relToMax.toExponential(2)}, ${v.mismatches} bad, first ${v.firstBad}`,
      ).toBe(true);
      const bits = judge(got, want, BIT);
      bitStats.runs++;
      if (bits.pass) bitStats.exact++;
      expect(bits.mismatches, `${label}: bit mismatches vs the oracle`).toBe(0);
      return v;
    },
    async recordOwnership(p) {
      const r = await runPlan(device, p.instrumentedPlan(), { read: [p.ownerBuffer] });
      const own = decodeOwnership(r.reads[p.ownerBuffer]!, p.facts.rows, p.facts.cols);
      expect(own.count.every((c) => c === 1)).toBe(true);
      return { own, output: new Float32Array(r.output) };
    },
  };
}
