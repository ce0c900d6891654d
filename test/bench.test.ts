// The bench harness in its quick mode on SwiftShader: every family runs, the sampled oracle gates it,
// the ratios are derived, and a wrong kernel is flagged (harness correctness, not speed).
import { describe, expect, it } from 'vitest';
import { getTestGpu } from './gpu';
import { runAppTune } from '../bench/apptune';
import { runBench, table, type BenchOptions, type BenchRow } from '../bench/harness';
import { BENCH_REPS, batchesAgree, timedBatches } from '../bench/exec';
import type { BenchGpu } from '../bench/dawn';
import { sampleIndices } from '../bench/oracle';
import { fastInt8, fastQ4kData } from '../bench/data';

async function benchGpu(): Promise<BenchGpu> {
  const { device, caps } = await getTestGpu();
  // The harness reads adapter.info only to recognise the adapter's datasheet peak.
  const adapter = { info: { device: caps.description } } as unknown as GPUAdapter;
  return { gpu: undefined as unknown as GPU, device, adapter, caps, flags: [] };
}

/** A quick run (one batch a row, no batch-size estimate) with its log lines; `opts` adds to or overrides it. */
async function quickBench(opts: Partial<BenchOptions>) {
  const gpu = await benchGpu();
  const lines: string[] = [];
  const r = await runBench(gpu, {
    quick: true,
    tune: false,
    moe: false,
    reps: 1,
    targetMs: 0,
    log: (s) => lines.push(s),
    ...opts,
  });
  return { r, lines };
}

describe('bench harness (quick, SwiftShader)', () => {
  it('benches every family, gates each config and derives the same-run ratios', async () => {
    const { r, lines } = await quickBench({ tune: true, moe: true });
    const measured = r.rows.filter((x) => x.ms !== undefined);
    const families = new Set(measured.map((x) => x.family));
    for (const f of [
      'mmq-q4k-rt',
      'mmq-q4k-tile',
      'mmq-q8-tiled',
      'mmq-q8-tile',
      'coopmat-f16',
      'gemm-f32',
      'moe-q4k-id',
    ]) {
      expect(families.has(f), `family ${f} measured`).toBe(true);
    }
    for (const x of measured) {
      expect(x.correctness?.pass, `${x.id} correct (rel ${x.correctness?.relToMax})`).toBe(true);
      expect(x.correctness?.allWritten).toBe(true);
      expect(x.ms).toBeGreaterThan(0);
      expect(x.tops).toBeGreaterThan(0);
      // The timed window, to line up with a clock log.
      expect(Date.parse(x.timedFrom!)).toBeLessThanOrEqual(Date.parse(x.at!));
    }
    // Multi-pass coopmat plans are charged every pass: the pipelined direct-A (2) and the split plan (3).
    for (const [name, passes] of [
      [',adir', 2],
      [',split', 3],
    ] as const) {
      const row = measured.find((x) => x.family === 'coopmat-f16' && x.tile.endsWith(name));
      expect(row?.passMs, `coopmat ${name} row`).toHaveLength(passes);
      expect(row!.ms).toBeCloseTo(
        row!.passMs!.reduce((a, b) => a + b, 0),
        9,
      );
    }
    // No subgroup matrices on SwiftShader: those rows are skipped with the adapter's reason, never run.
    const sgm = r.rows.filter((x) => x.arm === 'subgroup-matrix');
    expect(sgm.length).toBeGreaterThan(0);
    expect(sgm.every((x) => x.skipped?.includes('subgroup'))).toBe(true);
    // (a) vs the f32 baseline and (b) vs the scalar arm exist for the dp4a rows of the fixed kernels.
    const dp4a = measured.find((x) => x.family === 'mmq-q4k-rt' && x.arm === 'dp4a') as BenchRow;
    expect(dp4a.vsF32).toBeGreaterThan(0);
    expect(dp4a.vsScalar).toBeGreaterThan(0);
    expect(r.tuning.length).toBeGreaterThan(0);
    expect(r.tuning.every((t) => t.evaluated > 0)).toBe(true);
    expect(r.headline?.bestInt8).toBeDefined();
    expect(table(r).some((l) => l.startsWith('best WebGPU int8 MMQ'))).toBe(true);
    expect(lines.length).toBeGreaterThan(10);
  });

  it('flags a wrong kernel as WRONG instead of reporting its speed', async () => {
    const { r } = await quickBench({
      filter: /^mmq-q8-tiled\/dp4a/,
      // Skip the last 32-block of K: a plausible loop-bound bug that still writes every element.
      mutateWgsl: (_id, wgsl) => wgsl.replace('kb < kbc', 'kb + 1u < kbc'),
    });
    expect(r.rows).toHaveLength(1);
    const row = r.rows[0]!;
    expect(row.correctness?.allWritten).toBe(true);
    expect(row.correctness?.pass).toBe(false);
    expect(table(r).some((l) => l.includes('FAILED'))).toBe(true);
    // A wrong config never becomes the headline.
    expect(r.headline?.bestInt8).toBeUndefined();
  });

  it('times every passing row again in a later sweep and keeps the fastest sweep', async () => {
    const { r, lines } = await quickBench({
      sweeps: 3,
      filter: /^(mmq-q8-tiled\/|mmq-q4k-rt\/scalar|coopmat-f16\/scalar\/.*,split@|gemm-f32)/,
      // The dp4a arm made wrong: a failed row is never timed again.
      mutateWgsl: (id, wgsl) =>
        id.startsWith('mmq-q8-tiled/dp4a') ? wgsl.replace('kb < kbc', 'kb + 1u < kbc') : wgsl,
    });
    const passed = r.rows.filter((x) => x.correctness?.pass && x.ms !== undefined);
    expect(new Set(passed.map((x) => x.family))).toEqual(
      new Set(['mmq-q8-tiled', 'mmq-q4k-rt', 'coopmat-f16', 'gemm-f32']),
    );
    for (const x of passed) {
      expect(x.msSweeps, x.id).toHaveLength(3);
      expect(x.ms).toBe(Math.min(...x.msSweeps!));
      // The batches, passes and window are the kept sweep's.
      expect(Math.min(...x.msSamples!)).toBeCloseTo(x.passMs ? x.passMs[x.passMs.length - 1]! : x.ms!, 9);
      if (x.passMs)
        expect(x.ms).toBeCloseTo(
          x.passMs.reduce((a, b) => a + b, 0),
          9,
        );
    }
    const wrong = r.rows.find((x) => x.id.startsWith('mmq-q8-tiled/dp4a'))!;
    expect(wrong.correctness?.pass).toBe(false);
    expect(wrong.msSweeps).toBeUndefined();
    // Sweeps 2 and 3 go over a problem's rows in reverse order (the Q4_K problem: mmq-q4k-rt was benched
    // before coopmat-f16, so it is timed again after it), each sweep after the last; the wrong row never.
    const sweepLines = lines.filter((l) => l.startsWith('[sweep '));
    expect(sweepLines).toHaveLength(2 * passed.length);
    expect(sweepLines.some((l) => l.includes('mmq-q8-tiled/dp4a'))).toBe(false);
    const at = (sweep: number, id: string) =>
      sweepLines.findIndex((l) => l.startsWith(`[sweep ${sweep}] ${id} `));
    const rt = passed.find((x) => x.family === 'mmq-q4k-rt')!.id;
    const cm = passed.find((x) => x.family === 'coopmat-f16')!.id;
    expect(r.rows.findIndex((x) => x.id === rt)).toBeLessThan(r.rows.findIndex((x) => x.id === cm));
    expect(at(2, cm)).toBeGreaterThanOrEqual(0);
    expect(at(2, cm)).toBeLessThan(at(2, rt));
    expect(at(2, rt)).toBeLessThan(at(3, cm));
  });

  it("apptune runs the worker's hunt and autokernel per shape, and reports a failing shape instead of stopping", async () => {
    const { device, caps } = await getTestGpu();
    const lines: string[] = [];
    const r = await runAppTune(
      device,
      caps,
      {
        op: 'mmq_q4k_coopmat',
        // The second shape is not a multiple of the 256-wide Q4_K super-block: an error, then the next.
        shapes: [
          { m: 32, n: 64, k: 256 },
          { m: 32, n: 64, k: 100 },
          { m: 16, n: 32, k: 256 },
        ],
        evo: { population: 4, generations: 1, seed: 1, measureIters: 1, repeats: 1, banks: 1 },
      },
      (l) => lines.push(l),
    );
    expect(r.results).toHaveLength(3);
    const [ok, bad, last] = r.results;
    expect(ok!.report!.entries.map((e) => e.config)).toEqual(
      [0, 1, 2, 3].map((i) => `WM=2,WN=4,RM=1,RN=1,STAGING=${i}`), // the incumbent at every staging
    );
    expect(ok!.autokernel!.winner).toMatchObject({ served: ok!.report!.winner, verdict: { pass: true } });
    expect(ok!.autokernel!.empty).toMatchObject({ served: 'incumbent', verdict: { pass: true } });
    expect(bad!.report).toBeUndefined();
    expect(bad!.error).toMatch(/^shape: .*256/);
    expect(last!.report!.winner).not.toBe('');
    expect(lines.filter((l) => l.startsWith('[apptune] autokernel'))).toHaveLength(4);
  });

  it('times more batches when they disagree, and the fastest batch is the time', async () => {
    const run = async (seq: number[], reps: number) => {
      const firsts: boolean[] = [];
      let i = 0;
      const samples = await timedBatches(reps, async (first) => {
        firsts.push(first);
        return seq[i++]!;
      });
      return { samples, firsts };
    };
    // A steady config (the H200's 8,1,2,8 split row): three batches, within 1%.
    expect((await run([0.2107, 0.2107, 0.2097], 3)).samples).toHaveLength(3);
    // A slow phase that ends inside the row (an H200 row: 1.1196, 1.1250, 0.3932 ms): three more batches.
    const slow = await run([1.1196, 1.125, 0.3932, 0.3898, 0.3898, 0.39], 3);
    expect(slow.samples).toHaveLength(6);
    expect(Math.min(...slow.samples)).toBe(0.3898);
    // Only the first batch warms the clocks; at most 2 x reps batches.
    expect(slow.firsts).toEqual([true, false, false, false, false, false]);
    expect((await run([2, 1, 2, 1, 2, 1, 2, 1], 2)).samples).toHaveLength(4);
    // Three slow batches that agree (an H200 row: 0.5580, 0.5521, 0.5561 ms; the config's other commands
    // took 0.2429-0.2453): three batches report the slow phase, the bench's six see past it.
    const agreeing = [
      0.558, 0.5521, 0.5561, 0.2453, 0.2429, 0.2429, 0.2429, 0.2437, 0.2429, 0.2429, 0.2429, 0.2429,
    ];
    expect(Math.min(...(await run(agreeing, 3)).samples)).toBe(0.5521);
    const six = await run(agreeing, BENCH_REPS);
    expect(six.samples).toHaveLength(12);
    expect(Math.min(...six.samples)).toBe(0.2429);
    expect(batchesAgree([1, 1.1])).toBe(true);
    expect(batchesAgree([1, 1.11])).toBe(false);
  });

  it('samples corners, tile edges and interior points, in range and distinct', () => {
    const idx = sampleIndices(100, 300, 50);
    expect(new Set(idx).size).toBe(idx.length);
    expect(idx[0]).toBe(0);
    expect(idx.at(-1)).toBe(100 * 300 - 1);
    expect([...idx].every((v) => v >= 0 && v < 100 * 300)).toBe(true);
  });

  it('fast generators are deterministic, in range and not all zero', () => {
    const a = fastInt8(4096, 7);
    expect([...a]).toEqual([...fastInt8(4096, 7)]);
    expect(Math.min(...a)).toBeGreaterThanOrEqual(-127);
    expect(a.some((v) => v !== 0)).toBe(true);
    const d = fastQ4kData(4, 8, 256, 1);
    expect(d.w.qs.length).toBe(8 * 32);
    expect([...d.w.d].every((v) => v > 0)).toBe(true);
  });
});
