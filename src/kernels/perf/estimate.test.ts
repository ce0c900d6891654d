// Run estimates from the work: multiply-adds and bytes of a config against a measured or default rate,
// so a family's first big run asks too, and its defaults never do.
import { describe, expect, it } from 'vitest';
import { CATALOG } from '../catalog';
import type { RunConfig } from '../family';
import { KERNELS } from '..';
import { defaultArm, resolveConfig } from '../arms';
import { SWIFTSHADER_CAPS } from '../gpu/testCaps';
import { DEFAULT_EVOLUTION } from '../tune/evolution';
import {
  CONFIRM_MS,
  DEFAULT_COMPILE_MS,
  estimate,
  estimateHunt,
  estimateSweep,
  formatMs,
  guardedMs,
  huntShape,
  HUNT_SEARCH,
  plannedConfigs,
  rateFor,
  rateOfHunt,
  rateOfRun,
  workOf,
} from './estimate';

const run = { timed: true, instrument: true, targetMs: 25, batches: 6, passes: 1 };
const configOf = (kernel: string, params: Record<string, number | string>): RunConfig => {
  const catalog = CATALOG.get(kernel);
  return {
    kernel: catalog.id,
    arm: defaultArm(catalog, undefined, catalog.defaults),
    data: { source: 'reference', seed: 0 },
    params: { ...catalog.defaults, ...params },
  };
};

describe('run estimates', () => {
  it('read the work each family declares: every family with a real shape declares it', () => {
    for (const catalog of CATALOG.families)
      if (catalog.takes) expect(catalog.work, `${catalog.id} declares no work`).toBeDefined();
  });

  it('count multiply-adds and bytes from the declared shape (rows param, top-k and the bank)', () => {
    const rt = CATALOG.get('mmq-q4k-rt');
    expect(workOf(rt, configOf('mmq-q4k-rt', { m: 16, n: 4096, k: 14336 }))).toEqual({
      macs: 16 * 4096 * 14336,
      bytes: 4096 * 14336 * (144 / 256) + 16 * 14336 + 16 * 4096 * 4,
    });
    const moe = CATALOG.get('moe-q4k-id');
    const w = workOf(moe, configOf('moe-q4k-id', { tokens: 16, topk: 8, experts: 128, n: 768, k: 2048 }));
    expect(w.macs).toBe(16 * 8 * 768 * 2048);
    expect(w.bytes).toBeGreaterThan(128 * 768 * 2048 * (144 / 256)); // the whole bank is read
    const coop = CATALOG.get('coopmat-f16');
    expect(workOf(coop, configOf('coopmat-f16', { m: 2, n: 3, k: 256 })).bytes).toBeCloseTo(
      3 * 256 * (144 / 256) + 2 * 256 * 2 + 2 * 3 * 4,
    );
  });

  it("ask on a family's first run of a real-size tensor on a CPU adapter (the issue's 72-200 s runs)", () => {
    for (const [kernel, params] of [
      ['mmq-q4k-rt', { m: 16, n: 4096, k: 14336 }],
      ['coopmat-f16', { m: 16, n: 4096, k: 14336 }],
      ['moe-q4k-id', { tokens: 16, topk: 8, experts: 128, n: 768, k: 2048 }],
    ] as const) {
      const config = configOf(kernel, params);
      const rate = rateFor([], kernel, config.arm, true);
      const e = estimate(workOf(CATALOG.get(kernel), config), rate, { ...run, software: true });
      expect(guardedMs(e), kernel).toBeGreaterThan(CONFIRM_MS);
      expect(e.basis).toMatch(/a cautious default for a CPU adapter/);
    }
  });

  it("never ask for a family's defaults or small shape, on a CPU adapter or a GPU", () => {
    for (const catalog of CATALOG.families)
      for (const params of [{}, catalog.small])
        for (const software of [true, false]) {
          const config = configOf(catalog.id, params);
          const rate = rateFor([], catalog.id, config.arm, software);
          // Its plan's own passes (each is timed alone too), as built for SwiftShader.
          const caps = SWIFTSHADER_CAPS;
          const passes = KERNELS.get(catalog.id).build(resolveConfig(config, caps), caps).plan.passes.length;
          const e = estimate(workOf(catalog, config), rate, { ...run, passes, software });
          expect(guardedMs(e), `${catalog.id} ${JSON.stringify(params)}`).toBeLessThan(CONFIRM_MS);
        }
  });

  it('use the rate a run of the same family and arm measured (timed ms first), not the default', () => {
    const work = { macs: 1e9, bytes: 1e6 };
    const wall = rateOfRun('mmq-q4k-rt', 'dp4a', work, 100, undefined)!;
    expect(wall).toMatchObject({ macsPerMs: 1e7, basis: 'the last wall-clock mmq-q4k-rt dp4a run here' });
    expect(rateOfRun('mmq-q4k-rt', 'dp4a', work, 100, 10)!.macsPerMs).toBe(1e8);
    expect(rateOfRun('mmq-q4k-rt', 'dp4a', { macs: 0, bytes: 0 }, 100, 10)).toBeUndefined();
    const measured = [wall, rateOfRun('mmq-q4k-rt', 'dp4a', work, 50, undefined)!];
    expect(rateFor(measured, 'mmq-q4k-rt', 'dp4a', true).macsPerMs).toBe(2e7); // the latest
    expect(rateFor(measured, 'mmq-q4k-rt', 'scalar', true).basis).toMatch(/cautious default/);
    expect(rateFor(measured, 'coopmat-f16', 'dp4a', true).basis).toMatch(/cautious default/);
    // One kernel run is the slower of compute and memory. A GPU: a probe run and six batches of at least
    // one run each, 1.25x for batches that disagree, 1.05x wall per timed ms; two compiles (the run and
    // the ownership-recording variant) at the GPU default.
    const e = estimate({ macs: 2e9, bytes: 0 }, rateFor(measured, 'mmq-q4k-rt', 'dp4a', false), run);
    const k = e.kernelMs;
    expect(k).toBe(100); // 2e9 at the measured 2e7 a ms
    expect(e.compileMs).toBe(2 * DEFAULT_COMPILE_MS.hardware);
    expect(e.untimedMs).toBeCloseTo(300 + e.compileMs + (2 * 2e9) / 2e5 + 2 * k);
    expect(e.ms).toBeCloseTo(e.untimedMs + k + 6 * 1.25 * Math.max(25, k) * 1.05);
    // A CPU adapter: its batches double and cost 1.3x their timed span.
    const sw = estimate({ macs: 2e9, bytes: 0 }, rateFor(measured, 'mmq-q4k-rt', 'dp4a', true), {
      ...run,
      software: true,
    });
    expect(sw.kernelMs).toBe(100);
    expect(sw.ms - sw.untimedMs).toBeCloseTo(100 + 6 * 2 * 100 * 1.3);
    // Several passes: the plan and each pass timed, each with its probe run.
    const split = estimate({ macs: 2e9, bytes: 0 }, rateFor(measured, 'mmq-q4k-rt', 'dp4a', true), {
      ...run,
      software: true,
      passes: 3,
    });
    expect(split.ms - split.untimedMs).toBeCloseTo(4 * (100 + 6 * 2 * 100 * 1.3));
    // Compiled already: no compiling; untimed: no timing.
    const again = estimate({ macs: 2e9, bytes: 0 }, rateFor(measured, 'mmq-q4k-rt', 'dp4a', true), {
      ...run,
      compiled: true,
      timed: false,
    });
    expect(again.compileMs).toBe(0);
    expect(again.ms).toBe(again.untimedMs);
    const memoryBound = estimate({ macs: 1, bytes: 2e9 }, rateFor([], 'x', 'scalar', false), run);
    expect(memoryBound.kernelMs).toBe(2e9 / 5e7);
  });

  it("count compiling as measured for the family (any arm), else the adapter kind's default", () => {
    const work = { macs: 1e9, bytes: 0 };
    expect(rateFor([], 'mmq-q4k-rt', 'dp4a', true).compileMs).toBe(DEFAULT_COMPILE_MS.software);
    expect(rateFor([], 'mmq-q4k-rt', 'dp4a', false).compileMs).toBe(DEFAULT_COMPILE_MS.hardware);
    const measured = [
      rateOfRun('mmq-q4k-rt', 'scalar', work, 100, undefined, 1234)!,
      rateOfRun('coopmat-f16', 'scalar', work, 100, undefined, 99)!,
    ];
    expect(rateFor(measured, 'mmq-q4k-rt', 'dp4a', true).compileMs).toBe(1234);
    expect(rateOfRun('mmq-q4k-rt', 'scalar', work, 100, undefined, 0)).not.toHaveProperty('compileMs');
  });

  it('guard the work, not the compiling: a first run of a small shape never asks for its compile', () => {
    const rate = rateFor([], 'mmq-q4k-rt', 'dp4a', true);
    const small = estimate(
      { macs: 1e6, bytes: 1e5 },
      { ...rate, compileMs: 60_000 },
      { ...run, software: true },
    );
    expect(small.ms).toBeGreaterThan(CONFIRM_MS);
    expect(guardedMs(small)).toBeLessThan(CONFIRM_MS);
    expect(guardedMs(small)).toBe(small.ms - small.compileMs);
  });

  it('estimate a sweep as its points, each timed without ownership recording', () => {
    const rate = rateFor([], 'mmq-q4k-rt', 'dp4a', true);
    const shape = { targetMs: 25, batches: 6, passes: 1, software: true };
    const works = [
      { macs: 1e8, bytes: 0 },
      { macs: 4e8, bytes: 0 },
    ];
    const sweep = estimateSweep(works, rate, shape);
    const each = works.map((w) => estimate(w, rate, { ...shape, timed: true, instrument: false }));
    expect(sweep.ms).toBeCloseTo(each[0]!.ms + each[1]!.ms);
    expect(sweep.compileMs).toBe(2 * rate.compileMs);
    expect(sweep.kernelMs).toBe(4e8 / rate.macsPerMs);
    expect(sweep.basis).toMatch(/^2 points/);
  });

  it('estimate a hunt: every config compiled, gated and timed, then its end game', () => {
    const rate = { macsPerMs: 1e5, bytesPerMs: 1e9, compileMs: 2000, basis: 'test' };
    const evo = { population: 4, generations: 3, measureMs: 10, batches: 3 };
    const hunt = huntShape(evo, { seeds: 1 });
    // 4 + 2 x (4 - 2 elite) configs; 3 finalists, the incumbent and the seed; 4 checks, 3 rounds.
    expect(hunt).toEqual({
      configs: 8,
      batches: 3,
      measureMs: 10,
      finalists: 5,
      verified: 4,
      claimRounds: 3,
    });
    const work = { macs: 1e7, bytes: 0 }; // 100 ms a run
    const e = estimateHunt(work, rate, hunt);
    const timing = (target: number, batches: number) => 100 + batches * 1.25 * Math.max(target, 100) * 1.05;
    expect(e.compileMs).toBe(8 * 2000);
    expect(e.kernelMs).toBe(100);
    expect(e.ms).toBeCloseTo(
      8 * 2000 +
        8 * (30 + 100 + timing(10, 3)) +
        5 * timing(40, 3) +
        (4 * 100 + (2 * 1e7) / 2e5) +
        3 * 2 * timing(40, 1),
    );
    expect(e.basis).toMatch(/^8 configs, each compiled, checked and timed in 3 batches of 10 ms/);
    // More configs cost more; a CPU adapter's timings cost more; never more configs than feasible.
    expect(estimateHunt(work, rate, huntShape({ ...evo, generations: 6 })).ms).toBeGreaterThan(1.5 * e.ms);
    expect(estimateHunt(work, rate, { ...hunt, software: true }).ms).toBeGreaterThan(e.ms);
    expect(huntShape(evo, { feasible: 5 }).configs).toBe(5);
  });

  it('plan the configs as the search measures them: the first generation, then the children', () => {
    expect(plannedConfigs({ population: 8, generations: 4 }, 1000)).toBe(26);
    expect(plannedConfigs({ population: 8, generations: 4 }, 10)).toBe(10);
    expect(plannedConfigs({ population: 1, generations: 3 })).toBe(3); // a population of 1 is its own elite
    // The light copy of the search's numbers agrees with the search's own.
    expect({ finalists: HUNT_SEARCH.finalists, elitism: HUNT_SEARCH.elitism }).toEqual({
      finalists: DEFAULT_EVOLUTION.finalists,
      elitism: DEFAULT_EVOLUTION.elitism,
    });
  });

  it('a small hunt (10 configs of a 16 x 16 x 256 GEMM) stays under the guard; a big one does not', () => {
    const rate = rateFor([], 'mmq-q4k-tile', 'dp4a', true);
    const evo = { population: 5, generations: 2, measureMs: 10, batches: 3 };
    const small = estimateHunt({ macs: 16 * 16 * 256, bytes: 0 }, rate, huntShape(evo, { software: true }));
    expect(guardedMs(small)).toBeLessThan(CONFIRM_MS);
    const big = estimateHunt({ macs: 2048 ** 3, bytes: 0 }, rate, huntShape(evo, { software: true }));
    expect(guardedMs(big)).toBeGreaterThan(CONFIRM_MS);
  });

  it('do not trust a tiny run below the default (its time is overhead, not work)', () => {
    // 50 x 1 x 512 in 3 ms said 8.5e3 multiply-adds/ms, and a 50 x 256 x 512 run then asked for 6.7 s.
    const tiny = rateOfRun('mmq-q4k-rt', 'dp4a', { macs: 50 * 512, bytes: 0 }, 5, 3)!;
    expect(tiny.floor).toBe(true);
    expect(rateFor([tiny], 'mmq-q4k-rt', 'dp4a', true).basis).toMatch(/cautious default/);
    const fastTiny = rateOfRun('mmq-q4k-rt', 'dp4a', { macs: 1e6, bytes: 0 }, 5, 3)!;
    expect(rateFor([fastTiny], 'mmq-q4k-rt', 'dp4a', true).macsPerMs).toBeCloseTo(1e6 / 3);
  });

  it("take the tuner's hunts as a rate: the median measured config per arm, rejected ones skipped", () => {
    const rates = rateOfHunt('mmq-q4k-tile', { macs: 1e6, bytes: 0 }, [
      { arm: 'dp4a', ms: 1, verdict: 'measured' },
      { arm: 'dp4a', ms: 4, verdict: 'measured' },
      { arm: 'dp4a', ms: 2, verdict: 'measured' },
      { arm: 'dp4a', ms: Infinity, verdict: 'rejected' },
      { arm: 'scalar', ms: 10, verdict: 'measured' },
    ]);
    expect(rates.map((r) => [r.arm, r.macsPerMs])).toEqual([
      ['dp4a', 5e5],
      ['scalar', 1e5],
    ]);
    // Their compiling: the median of the measured configs' compile phases.
    const withPhases = rateOfHunt('mmq-q4k-tile', { macs: 1e6, bytes: 0 }, [
      { arm: 'dp4a', ms: 1, verdict: 'measured', phases: { compileMs: 900 } },
      { arm: 'dp4a', ms: 2, verdict: 'measured', phases: { compileMs: 300 } },
      { arm: 'dp4a', ms: 3, verdict: 'measured', phases: { compileMs: 500 } },
      { arm: 'dp4a', ms: Infinity, verdict: 'rejected', phases: { compileMs: 1e6 } },
    ]);
    expect(withPhases[0]!.compileMs).toBe(500);
  });

  it('say durations in words', () => {
    expect([formatMs(12.3), formatMs(7400), formatMs(600_000)]).toEqual(['12 ms', '7.4 s', '10 min']);
    expect([formatMs(999), formatMs(1000), formatMs(119_999), formatMs(120_000)]).toEqual([
      '1.0e+3 ms',
      '1.0 s',
      '120.0 s',
      '2 min',
    ]);
  });

  it("a run's rate: timed ms when it has a positive one, else its wall time; none from no time", () => {
    const work = { macs: 1e9, bytes: 0 };
    expect(rateOfRun('k', 'dp4a', work, 100, 40)).toEqual({
      kernel: 'k',
      arm: 'dp4a',
      macsPerMs: 1e9 / 40,
      basis: 'the last timed k dp4a run here',
    });
    // A timing of 0 (a timer too coarse to see the run) is no timing.
    expect(rateOfRun('k', 'dp4a', work, 100, 0)).toEqual({
      kernel: 'k',
      arm: 'dp4a',
      macsPerMs: 1e9 / 100,
      basis: 'the last wall-clock k dp4a run here',
    });
    expect(rateOfRun('k', 'dp4a', work, 0, undefined)).toBeUndefined();
    expect(rateOfRun('k', 'dp4a', work, 0, 0)).toBeUndefined();
    // A run of INFORMATIVE_MS or more shows the rate; a shorter one only a floor.
    expect(rateOfRun('k', 'dp4a', work, 20, undefined)).not.toHaveProperty('floor');
    expect(rateOfRun('k', 'dp4a', work, 19.9, undefined)).toHaveProperty('floor', true);
  });

  it("a hunt's compiling leaves out configs that compiled nothing", () => {
    const [rate] = rateOfHunt('k', { macs: 1e6, bytes: 0 }, [
      { arm: 'dp4a', ms: 1, verdict: 'measured', phases: { compileMs: 0 } },
      { arm: 'dp4a', ms: 2, verdict: 'measured', phases: { compileMs: 0 } },
      { arm: 'dp4a', ms: 3, verdict: 'measured', phases: { compileMs: 700 } },
    ]);
    expect(rate!.compileMs).toBe(700);
  });

  it('the default rate says which kind of adapter it assumes', () => {
    expect(rateFor([], 'k', 'dp4a', false).basis).toBe(
      'no k dp4a run measured here yet: a cautious default for a GPU',
    );
    expect(rateFor([], 'k', 'dp4a', true).basis).toBe(
      'no k dp4a run measured here yet: a cautious default for a CPU adapter',
    );
  });

  it('an estimate says what it rests on', () => {
    const rate = { macsPerMs: 2e5, bytesPerMs: 1e6, compileMs: 0, basis: 'measured' };
    const shape = { timed: true, instrument: false, targetMs: 25, batches: 6, passes: 1 };
    expect(estimate({ macs: 2e6, bytes: 3e6 }, rate, shape).basis).toBe(
      '2.00e+6 multiply-adds and 3.00 MB at 2.0e+8 multiply-adds/s (measured), one run about 10 ms; timing runs 6 batches',
    );
    expect(estimate({ macs: 2e6, bytes: 3e6 }, rate, { ...shape, passes: 2 }).basis).toMatch(
      /; timing runs 6 batches for the plan and each of its 2 passes$/,
    );
  });
});
