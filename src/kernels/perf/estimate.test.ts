// Run estimates from the work: multiply-adds and bytes of a config against a measured or default rate,
// so a family's first big run asks too, and its defaults never do.
import { describe, expect, it } from 'vitest';
import { CATALOG } from '../catalog';
import type { RunConfig } from '../family';
import { defaultArm } from '../gpu/arms';
import { CONFIRM_MS, estimate, formatMs, rateFor, rateOfHunt, rateOfRun, workOf } from './estimate';

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
      const e = estimate(workOf(CATALOG.get(kernel), config), rate, run);
      expect(e.ms, kernel).toBeGreaterThan(CONFIRM_MS);
      expect(e.basis).toMatch(/a cautious default for a CPU adapter/);
    }
  });

  it("never ask for a family's defaults or small shape, on a CPU adapter or a GPU", () => {
    for (const catalog of CATALOG.families)
      for (const params of [{}, catalog.small])
        for (const software of [true, false]) {
          const config = configOf(catalog.id, params);
          const rate = rateFor([], catalog.id, config.arm, software);
          const e = estimate(workOf(catalog, config), rate, { ...run, passes: 4 });
          expect(e.ms, `${catalog.id} ${JSON.stringify(params)}`).toBeLessThan(CONFIRM_MS);
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
    // One kernel run is the slower of compute and memory; six timed batches of at least one run each.
    const e = estimate({ macs: 2e9, bytes: 0 }, rateFor(measured, 'mmq-q4k-rt', 'dp4a', true), run);
    expect(e.kernelMs).toBe(100);
    expect(e.ms).toBeCloseTo(e.untimedMs + 6 * 100);
    expect(e.untimedMs).toBeCloseTo(300 + (2 * 2e9) / 2e5 + 2 * 100);
    const memoryBound = estimate({ macs: 1, bytes: 2e9 }, rateFor([], 'x', 'scalar', false), run);
    expect(memoryBound.kernelMs).toBe(2e9 / 5e7);
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
  });

  it('say durations in words', () => {
    expect([formatMs(12.3), formatMs(7400), formatMs(600_000)]).toEqual(['12 ms', '7.4 s', '10 min']);
  });
});
