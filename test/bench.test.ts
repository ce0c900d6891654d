// The bench harness in its quick mode on SwiftShader: every family runs through the runner, its oracle
// gates it, the ratios are derived, a wrong kernel is flagged and sweeps keep the fastest (harness
// correctness, not speed), and the batch rule every timing shares.
import { describe, expect, it } from 'vitest';
import type { BenchGpu } from '../bench/dawn';
import { deriveRatios } from '../bench/derive';
import { table } from '../bench/format';
import { runBench, type BenchOptions } from '../bench/harness';
import type { BenchRow } from '../bench/result';
import { sampleIndices } from '../bench/oracle';
import { batchesAgree, timedBatches, TIMING_DEFAULTS } from '../src/kernels/gpu/timing';
import { fastInt8, fastQ4kData } from '../src/kernels/quant/synthetic';
import { getFastTestGpu } from './gpu';

async function benchGpu(): Promise<BenchGpu> {
  const { device, caps } = await getFastTestGpu();
  // The harness reads adapter.info only to recognise the adapter's datasheet peak.
  const adapter = { info: { device: caps.description } } as unknown as GPUAdapter;
  return { gpu: undefined as unknown as GPU, device, adapter, caps, flags: [] };
}

/** A quick run (one batch a row) with its log lines; `opts` adds to or overrides it. */
async function quickBench(opts: Partial<BenchOptions>) {
  const gpu = await benchGpu();
  const lines: string[] = [];
  const r = await runBench(gpu, {
    quick: true,
    tune: false,
    moe: false,
    reps: 1,
    targetMs: 1,
    log: (s) => lines.push(s),
    ...opts,
  });
  return { r, lines };
}

/** The last 32-block of K dropped: a plausible loop-bound bug that still writes every element. */
const dropLastBlock = (wgsl: string) => wgsl.replace('kb < kbc', 'kb + 1u < kbc');

describe('bench harness (quick, SwiftShader)', () => {
  it('benches every family through the runner, gates each config and derives the same-run ratios', async () => {
    const { r, lines } = await quickBench({ tune: true, moe: true });
    const measured = r.rows.filter((x) => x.ms !== undefined);
    const families = new Set(measured.map((x) => x.family));
    for (const f of ['mmq-q4k-rt', 'mmq-q4k-tile', 'mmq-q8-tiled', 'coopmat-f16', 'gemm-f32', 'moe-q4k-id'])
      expect(families.has(f), `family ${f} measured`).toBe(true);
    for (const x of measured) {
      expect(x.correctness?.pass, `${x.id} correct (rel ${x.correctness?.relToMax})`).toBe(true);
      expect(x.correctness?.allWritten).toBe(true);
      expect(x.ms).toBeGreaterThan(0);
      expect(x.tops).toBeGreaterThan(0);
      expect(x.msSamples!.length).toBeGreaterThanOrEqual(1);
      expect(x.ms).toBe(Math.min(...x.msSamples!));
      // The timed window, to line up with a clock log.
      expect(Date.parse(x.timedFrom!)).toBeLessThanOrEqual(Date.parse(x.at!));
    }
    // A split coopmat plan is timed whole (back to back) and each of its three passes alone.
    const split = measured.find((x) => x.family === 'coopmat-f16' && x.tile.endsWith('prepass'));
    expect(split?.passMs, 'a split coopmat row').toHaveLength(3);
    // Where the adapter has no subgroup matrices (SwiftShader), those rows are skipped with its reason;
    // where it has them, they ran and passed like the rest.
    const sgm = r.rows.filter((x) => x.arm === 'subgroup-matrix');
    expect(sgm.length).toBeGreaterThan(0);
    const hasMatrices = r.adapter.features.includes('chromium-experimental-subgroup-matrix');
    if (hasMatrices) expect(sgm.some((x) => x.correctness?.pass)).toBe(true);
    else expect(sgm.every((x) => x.skipped?.includes('subgroup matri'))).toBe(true);
    // (a) vs the f32 baseline and (b) vs the scalar arm exist for the dp4a rows of the fixed kernels.
    const dp4a = measured.find((x) => x.family === 'mmq-q4k-rt' && x.arm === 'dp4a') as BenchRow;
    expect(dp4a.vsF32).toBeGreaterThan(0);
    expect(dp4a.vsScalar).toBeGreaterThan(0);
    // The product's tuners ran (the headline shape) and their winners were benched as 'tuned' rows.
    expect(r.tuning.map((t) => t.family)).toEqual(['mmq-q4k-tile', 'coopmat-f16']);
    expect(r.tuning.every((t) => t.evaluated > 0)).toBe(true);
    expect(
      measured
        .filter((x) => x.role === 'tuned')
        .map((x) => x.family)
        .sort(),
    ).toEqual(['coopmat-f16', 'mmq-q4k-tile']);
    // MoE rows carry their experts; the headline is about our rows, never a baseline.
    expect(measured.some((x) => x.family === 'moe-q4k-id' && x.experts === 4)).toBe(true);
    expect(r.headline?.bestAny?.id).not.toMatch(/^gemm-f32/);
    expect(lines.some((l) => /best WebGPU/.test(l))).toBe(true);
    // Both MoE routes ran (the int8 reference kernel and the f16 split plan), and the case's ratio line.
    const moeIds = measured.filter((x) => x.family === 'moe-q4k-id').map((x) => x.id);
    expect(moeIds.some((id) => /\/int8,ytiles/.test(id))).toBe(true);
    expect(moeIds.some((id) => /\/f16,/.test(id))).toBe(true);
    expect(lines.at(-1)).toMatch(/^MOE 4x8 \(experts x tokens, top-2, 64x256\): ours \d/);
  });

  it('flags a wrong kernel as WRONG instead of reporting its speed', async () => {
    const { r } = await quickBench({
      filter: /^mmq-q8-tiled\/dp4a/,
      mutateWgsl: (_id, wgsl) => dropLastBlock(wgsl),
    });
    expect(r.rows).toHaveLength(1);
    const row = r.rows[0]!;
    expect(row.correctness?.allWritten).toBe(true);
    expect(row.correctness?.pass).toBe(false);
    expect(row.ms).toBeUndefined();
    expect(table(r).some((l) => l.includes('FAILED'))).toBe(true);
    // A wrong config never becomes the headline.
    expect(r.headline?.bestInt8).toBeUndefined();
  });

  it('times every passing row again in a later sweep, in reverse order, and keeps the fastest sweep', async () => {
    const { r, lines } = await quickBench({
      sweeps: 3,
      filter: /^mmq-q8-tiled\//,
      // The dp4a arm made wrong: a failed row is never timed again.
      mutateWgsl: (id, wgsl) => (id.startsWith('mmq-q8-tiled/dp4a') ? dropLastBlock(wgsl) : wgsl),
    });
    const passed = r.rows.filter((x) => x.correctness?.pass && x.ms !== undefined);
    expect(passed.map((x) => x.arm)).toEqual(['scalar']);
    for (const x of passed) {
      expect(x.msSweeps, x.id).toHaveLength(3);
      expect(x.ms).toBe(Math.min(...x.msSweeps!));
    }
    const wrong = r.rows.find((x) => x.id.startsWith('mmq-q8-tiled/dp4a'))!;
    expect(wrong.correctness?.pass).toBe(false);
    expect(wrong.msSweeps).toBeUndefined();
    expect(lines.filter((l) => l.startsWith('[sweep '))).toHaveLength(2 * passed.length);
  });

  it('times more batches when they disagree, and the fastest batch is the time', async () => {
    const run = async (seq: number[], batches: number) => {
      let i = 0;
      return timedBatches(batches, async () => seq[i++]!);
    };
    // A steady config (the H200's 8,1,2,8 split row): three batches, within 1%.
    expect(await run([0.2107, 0.2107, 0.2097], 3)).toHaveLength(3);
    // A slow phase that ends inside the row (an H200 row: 1.1196, 1.1250, 0.3932 ms): three more batches.
    const slow = await run([1.1196, 1.125, 0.3932, 0.3898, 0.3898, 0.39], 3);
    expect(slow).toHaveLength(6);
    expect(Math.min(...slow)).toBe(0.3898);
    expect(await run([2, 1, 2, 1, 2, 1, 2, 1], 2)).toHaveLength(4);
    // Three slow batches that agree (an H200 row: 0.5580, 0.5521, 0.5561 ms; the config's other commands
    // took 0.2429-0.2453): three batches report the slow phase, the default six see past it.
    const agreeing = [
      0.558, 0.5521, 0.5561, 0.2453, 0.2429, 0.2429, 0.2429, 0.2437, 0.2429, 0.2429, 0.2429, 0.2429,
    ];
    expect(Math.min(...(await run(agreeing, 3)))).toBe(0.5521);
    const six = await run(agreeing, TIMING_DEFAULTS.batches);
    expect(six).toHaveLength(12);
    expect(Math.min(...six)).toBe(0.2429);
    expect(batchesAgree([1, 1.1])).toBe(true);
    expect(batchesAgree([1, 1.11])).toBe(false);
  });

  it("compares a row with the scalar row of its knobs, else of its family's declared tile", () => {
    const row = (arm: string, tile: string, ms: number, tileKnobs?: string): BenchRow => ({
      id: `coopmat-f16/${arm}/${tile}`,
      family: 'coopmat-f16',
      weights: 'q4k',
      arm,
      role: 'fixed',
      tile,
      ...(tileKnobs ? { tileKnobs } : {}),
      m: 32,
      n: 64,
      k: 256,
      ms,
      correctness: { pass: true, relToMax: 0, samples: 1, allWritten: true, tol: 0 },
    });
    const scalar = row('scalar', '8,1,2,8,prepass', 4, '8,1,2,8');
    const same = row('subgroup-matrix', '8,1,2,8,prepass', 1, '8,1,2,8');
    const staged = row('subgroup-matrix', '8,1,2,8,in-gemm', 2, '8,1,2,8');
    const other = row('subgroup-matrix', '8,1,2,4,in-gemm', 2, '8,1,2,4');
    const undeclared = row('subgroup-matrix', '8,1,2,8,fused-prepass', 2);
    deriveRatios([scalar, same, staged, other, undeclared]);
    expect([same.vsScalar, staged.vsScalar]).toEqual([4, 2]);
    expect([other.vsScalar, undeclared.vsScalar]).toEqual([undefined, undefined]);
  });

  it('samples corners, tile edges and interior points, in range and distinct', () => {
    const idx = sampleIndices(100, 300, 50);
    expect(new Set(idx).size).toBe(idx.length);
    expect(idx[0]).toBe(0);
    expect(idx.at(-1)).toBe(100 * 300 - 1);
    expect([...idx].every((v) => v >= 0 && v < 100 * 300)).toBe(true);
  });

  it('synthetic generators are deterministic, in range and not all zero', () => {
    const a = fastInt8(4096, 7);
    expect([...a]).toEqual([...fastInt8(4096, 7)]);
    expect(Math.min(...a)).toBeGreaterThanOrEqual(-127);
    expect(a.some((v) => v !== 0)).toBe(true);
    const d = fastQ4kData(4, 8, 256, 1);
    expect(d.w.qs.length).toBe(8 * 32);
    expect([...d.w.d].every((v) => v > 0)).toBe(true);
  });
});
